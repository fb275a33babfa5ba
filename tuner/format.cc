#include "tuner/format.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "tuner/net_builder.h"
#include "tuner/table.h"

namespace tunedb::tuner {

std::string FormatBytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  if (u == 0) return absl::StrCat(bytes, " B");
  if (v == static_cast<int64_t>(v)) {
    return absl::StrFormat("%d %s", static_cast<int64_t>(v), units[u]);
  }
  return absl::StrFormat("%.1f %s", v, units[u]);
}

std::string FormatMs(double ms) { return absl::StrFormat("%.3f", ms); }

std::string FormatTime(int64_t micros) {
  if (micros == 0) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%SZ", absl::FromUnixMicros(micros),
                          absl::UTCTimeZone());
}

const std::vector<NamedConstraints>& CommonConstraintSets() {
  static const auto* sets = [] {
    auto* v = new std::vector<NamedConstraints>();
    Constraints c;
    v->push_back({"unlimited workspace", c});
    c.max_workspace_bytes = 0;
    v->push_back({"workspace <= 0 B", c});
    c.max_workspace_bytes = int64_t{64} << 20;
    v->push_back({"workspace <= 64 MiB", c});
    c.max_workspace_bytes = int64_t{1} << 30;
    v->push_back({"workspace <= 1 GiB", c});
    Constraints det;
    det.deterministic_only = true;
    v->push_back({"deterministic only", det});
    Constraints graph;
    graph.launch_mode = LaunchMode::kGraph;
    v->push_back({"graph launches", graph});
    return v;
  }();
  return *sets;
}

nlohmann::json TimingToJson(const Timing& t) {
  return {{"median_ms", t.median_ms},
          {"spread_ms", t.spread_ms},
          {"samples", t.samples}};
}

nlohmann::json AlgoToJson(const AlgoResult& r) {
  nlohmann::json j = {
      {"algo", r.algo},
      {"math", std::string(MathTypeName(r.math_type))},
      {"status", std::string(AlgoStatusName(r.status))},
      {"launch", TimingToJson(r.launch)},
      {"gpu", TimingToJson(r.gpu)},
      {"host", TimingToJson(r.host)},
      {"workspace_bytes", r.workspace_bytes},
      {"deterministic", r.deterministic},
      {"retimed", r.retimed},
  };
  if (!r.error.empty()) j["error"] = r.error;
  if (r.heuristic_rank > 0) j["heuristic_rank"] = r.heuristic_rank;
  if (!r.knobs.empty() || r.numerical_notes != 0 || r.behavior_notes != 0 ||
      !r.plan.empty() || r.build_ms > 0) {
    j["engine"] = {{"knobs", KnobsText(r.knobs)},
                   {"numerical_notes", NumericalNotesText(r.numerical_notes)},
                   {"behavior_notes", BehaviorNotesText(r.behavior_notes)},
                   {"plan_bytes", r.plan.size()},
                   {"build_ms", r.build_ms}};
  }
  return j;
}

nlohmann::json DeviceToJson(const DeviceKey& d) {
  return {{"gpu", d.gpu_model},
          {"cc", absl::StrCat(d.cc_major, ".", d.cc_minor)},
          {"sms", d.sm_count},
          {"cudnn", CudnnVersionText(d.cudnn_version)},
          {"cuda", CudaVersionText(d.cuda_runtime_version)}};
}

nlohmann::json ProblemToJson(const ConvProblem& p) {
  auto dims = [&p](const Dims& d) {
    return std::vector<int64_t>(d.begin(), d.begin() + p.spatial_dims);
  };
  return {{"op", std::string(ConvOpName(p.op))},
          {"n", p.n},
          {"c", p.c},
          {"k", p.k},
          {"in", dims(p.input)},
          {"filt", dims(p.filter)},
          {"pad", dims(p.padding)},
          {"stride", dims(p.stride)},
          {"dil", dims(p.dilation)},
          {"groups", p.groups},
          {"mode", std::string(ConvModeName(p.mode))},
          {"in_type", std::string(DataTypeName(p.input_type))},
          {"out_type", std::string(DataTypeName(p.output_type))},
          {"compute", std::string(DataTypeName(p.compute_type))},
          {"layout", std::string(LayoutName(p.layout))},
          {"tc", p.allow_tensor_cores},
          {"tf32", p.allow_tf32},
          {"api", std::string(ConvApiName(p.api))},
          {"align", p.alignment}};
}

nlohmann::json RecordToJson(const Record& r) {
  nlohmann::json results = nlohmann::json::array();
  for (const AlgoResult& a : r.results) results.push_back(AlgoToJson(a));
  nlohmann::json j = {
      {"id", r.id},
      {"key", r.key.ToText()},
      {"key_hash", r.key.HashText()},
      {"device", DeviceToJson(r.key.device)},
      {"problem", ProblemToJson(r.key.problem)},
      {"results", results},
      {"measured_at_us", r.measured_at_us},
      {"measured_at", FormatTime(r.measured_at_us)},
      {"host", r.host},
      {"gpu_uuid", r.gpu_uuid},
      {"driver_version", r.driver_version},
      {"finder", r.finder},
      {"repeats", r.repeats},
      {"workspace_cap_bytes", r.workspace_cap_bytes},
      {"search_ms", r.search_ms},
      {"verified", r.verified},
      {"served_count", r.served_count},
      {"timing_version", r.timing_version},
      {"stale", r.stale()},
      {"revalidated_from_cudnn", r.revalidated_from_cudnn},
      {"revalidated_from_driver", r.revalidated_from_driver},
  };
  std::optional<AlgoResult> best = Choose(r, Constraints());
  j["best"] = best ? AlgoToJson(*best) : nlohmann::json(nullptr);
  return j;
}

nlohmann::json RecordWithChoicesToJson(const Record& r) {
  nlohmann::json j = RecordToJson(r);
  nlohmann::json choices = nlohmann::json::array();
  for (const NamedConstraints& c : CommonConstraintSets()) {
    std::optional<AlgoResult> choice = Choose(r, c.constraints);
    choices.push_back(
        {{"constraints", c.name},
         {"max_workspace_bytes",
          c.constraints.max_workspace_bytes
              ? nlohmann::json(*c.constraints.max_workspace_bytes)
              : nlohmann::json(nullptr)},
         {"deterministic_only", c.constraints.deterministic_only},
         {"launch_mode",
          std::string(LaunchModeName(c.constraints.launch_mode))},
         {"choice", choice ? AlgoToJson(*choice) : nlohmann::json(nullptr)}});
  }
  j["choices"] = choices;
  return j;
}

namespace {

// The key, where and how it was measured, what it was ranked by.
void PrintProvenance(std::ostream& out, const Record& r) {
  PrintKeyValues(
      out,
      {{"key", r.key.ToText()},
       {"id", absl::StrCat(r.id)},
       {"key hash", r.key.HashText()},
       {"gpu",
        absl::StrCat(r.key.device.gpu_model, " (cc ", r.key.device.cc_major,
                     ".", r.key.device.cc_minor, ", ", r.key.device.sm_count,
                     " SMs), cuDNN ",
                     CudnnVersionText(r.key.device.cudnn_version), ", CUDA ",
                     CudaVersionText(r.key.device.cuda_runtime_version))},
       {"problem", absl::StrCat(std::string(ConvOpName(r.key.problem.op)), " ",
                                ShapeSummary(r.key.problem), " ",
                                TypeSummary(r.key.problem), " ",
                                std::string(LayoutName(r.key.problem.layout)))},
       {"measured",
        absl::StrCat(FormatTime(r.measured_at_us), " on ", r.host, " (",
                     r.gpu_uuid, ", driver ", r.driver_version, ")")},
       {"finder",
        absl::StrCat(r.finder, ", ", r.repeats, " repeats, workspace cap ",
                     FormatBytes(r.workspace_cap_bytes))},
       {"search",
        absl::StrCat(FormatMs(r.search_ms), " ms",
                     r.verified ? ", verified" : "",
                     r.revalidated_from_cudnn == 0
                         ? ""
                         : absl::StrCat(", revalidated from cuDNN ",
                                        CudnnVersionText(
                                            r.revalidated_from_cudnn)),
                     r.revalidated_from_driver.empty()
                         ? ""
                         : absl::StrCat(", revalidated from driver ",
                                        r.revalidated_from_driver))},
       {"served", absl::StrCat(r.served_count, " times")},
       {"ranked by",
        r.stale() ? "GPU time: measured before launch timing (stale; the "
                    "next tune searches again)"
                  : "launch time (direct calls); graph launches choose by "
                    "GPU time"}});
}

// One row of the ranking; `rank` counts the OK results so far.
std::vector<std::string> RankingRow(const AlgoResult& a, bool graph,
                                    int* rank) {
  const auto ms = [](const Timing& t) {
    return t.measured() ? FormatMs(t.median_ms) : std::string("-");
  };
  const bool ok = a.status == AlgoStatus::kOk;
  const Timing& cost = a.cost(LaunchMode::kDirect);
  std::vector<std::string> row = {ok ? absl::StrCat(++*rank) : "-",
                                  absl::StrCat(a.algo),
                                  std::string(MathTypeName(a.math_type)),
                                  std::string(AlgoStatusName(a.status)),
                                  ok ? ms(a.launch) : "-",
                                  ok ? ms(a.gpu) : "-",
                                  ok ? ms(a.host) : "-",
                                  ok ? FormatMs(cost.spread_ms) : "-",
                                  ok ? absl::StrCat(cost.samples) : "-",
                                  FormatBytes(a.workspace_bytes),
                                  a.deterministic ? "yes" : "no",
                                  a.heuristic_rank > 0
                                      ? absl::StrCat(a.heuristic_rank)
                                      : "-",
                                  a.error};
  if (graph) {
    std::string notes = NumericalNotesText(a.numerical_notes);
    const std::string behavior = BehaviorNotesText(a.behavior_notes);
    if (!behavior.empty()) {
      absl::StrAppend(&notes, notes.empty() ? "" : ",", behavior);
    }
    row.insert(row.begin() + 2,
               {KnobsText(a.knobs), notes,
                a.plan.empty() ? "-" : FormatBytes(a.plan.size()),
                a.build_ms > 0 ? FormatMs(a.build_ms) : "-"});
  }
  return row;
}

Table RankingTable(const Record& r, bool graph) {
  std::vector<std::string> columns = {
      "#>",       "algo>",     "math",          "status",
      "launch ms>", "gpu ms>", "host ms>",      "spread ms>",
      "samples>", "workspace>", "deterministic", "heuristic>", "error"};
  if (graph) {
    columns.insert(columns.begin() + 2, {"knobs", "notes", "plan>", "build ms>"});
  }
  Table ranking(columns);
  int rank = 0;
  for (const AlgoResult& a : r.results) {
    ranking.AddRow(RankingRow(a, graph, &rank));
  }
  return ranking;
}

Table ChoicesTable(const Record& r) {
  Table chosen({"constraints", "algo>", "math", "cost ms>", "workspace>"});
  for (const NamedConstraints& c : CommonConstraintSets()) {
    std::optional<AlgoResult> choice = Choose(r, c.constraints);
    if (choice) {
      chosen.AddRow(
          {c.name, absl::StrCat(choice->algo),
           std::string(MathTypeName(choice->math_type)),
           FormatMs(choice->cost(c.constraints.launch_mode).median_ms),
           FormatBytes(choice->workspace_bytes)});
    } else {
      chosen.AddRow({c.name, "-", "none meets these constraints", "-", "-"});
    }
  }
  return chosen;
}

}  // namespace

void PrintRecordDetails(std::ostream& out, const Record& r) {
  PrintProvenance(out, r);
  const bool graph = r.key.problem.api == ConvApi::kGraph;
  if (graph) {
    out << "\ngraph API: algo is the engine's global index; plan = a "
           "serialized execution plan is stored; build ms = what building "
           "the plan cost the search\n";
  }
  out << "\nranking\n";
  RankingTable(r, graph).Print(out);
  out << "\nchosen under constraints\n";
  ChoicesTable(r).Print(out);
}

}  // namespace tunedb::tuner
