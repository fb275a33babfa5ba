#include "bench/regret/regret_report.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cudnn/cudnn_status.h"
#include "tuner/format.h"
#include "tuner/table.h"

namespace tunedb::regret {
namespace {

std::string Ratio(double r) { return absl::StrFormat("%.3f", r); }
std::string Seconds(double s) { return absl::StrFormat("%.1f", s); }
std::string Ms(double ms) { return absl::StrFormat("%.4f", ms); }

std::string AlgoText(int algo, MathType math) {
  return absl::StrCat(algo, " ", MathTypeName(math));
}

std::string PassName(const ProblemMeasurement& m) {
  return std::string(ConvOpName(m.problem.problem.op));
}

std::string LayoutText(const ProblemMeasurement& m) {
  return std::string(LayoutName(m.problem.problem.layout));
}

nlohmann::json PerfToJson(const AlgoPerf& e) {
  return {{"algo", e.algo},
          {"status", std::string(CudnnStatusName(e.status))},
          {"time_ms", e.time_ms},
          {"memory", e.memory},
          {"deterministic", e.deterministic},
          {"math", std::string(MathTypeName(e.math))}};
}

nlohmann::json PickToJson(const ProblemMeasurement& m, PickKind kind) {
  const Pick& p = m.pick(kind);
  nlohmann::json j = {{"found", p.found}};
  if (p.found) {
    j["algo"] = p.algo;
    j["math"] = std::string(MathTypeName(p.math));
    j["workspace_bytes"] = p.workspace_bytes;
    const TimedCandidate* c = FindCandidate(m, p.algo, p.math);
    if (c != nullptr && c->timed()) j["median_ms"] = c->median_ms;
  }
  if (std::optional<double> r = PickRatio(m, kind)) j["ratio"] = *r;
  if (!p.note.empty()) j["note"] = p.note;
  return j;
}

nlohmann::json PickSummaryToJson(const PickSummary& s) {
  return {{"ratios", s.ratios},       {"missing", s.missing},
          {"over_5pct", s.over_5pct}, {"over_10pct", s.over_10pct},
          {"worst_ratio", s.worst},   {"geomean_ratio", s.geomean}};
}

// The cells of one summary row.
std::vector<std::string> SummaryRow(const GroupSummary& g) {
  std::vector<std::string> row = {g.set,
                                  g.pass,
                                  g.dtype,
                                  g.layout,
                                  absl::StrCat(g.measured),
                                  g.errors > 0 ? absl::StrCat(g.errors) : ""};
  for (PickKind kind : kPickKinds) {
    const PickSummary& s = g.pick(kind);
    if (s.ratios == 0) {
      row.insert(row.end(), {"-", "-", "-", "-"});
      continue;
    }
    row.push_back(absl::StrCat(s.over_5pct, "/", s.ratios));
    row.push_back(absl::StrCat(s.over_10pct));
    row.push_back(Ratio(s.worst));
    row.push_back(Ratio(s.geomean));
  }
  row.push_back(Seconds(g.search_s));
  row.push_back(Seconds(g.find_s));
  row.push_back(g.find_s > 0 ? absl::StrFormat("%.1f", g.SearchOverFind())
                             : "-");
  row.push_back(g.find_cold_s > 0 ? Seconds(g.find_cold_s) : "-");
  return row;
}

tuner::Table SummaryTable() {
  std::vector<std::string> columns = {"set",    "pass",      "dtype",
                                      "layout", "problems>", "errors>"};
  for (const char* who : {"tunedb", "find", "heur"}) {
    columns.push_back(absl::StrCat(who, ">5%>"));
    columns.push_back(absl::StrCat(who, ">10%>"));
    columns.push_back(absl::StrCat(who, " worst>"));
    columns.push_back(absl::StrCat(who, " geomean>"));
  }
  columns.insert(columns.end(),
                 {"search s>", "find s>", "search/find>", "first find s>"});
  return tuner::Table(std::move(columns));
}

}  // namespace

void PrintHeader(std::ostream& out, const RunInfo& info) {
  const DeviceKey& key = info.device.key;
  out << "# GPU " << key.gpu_model << " (cc " << key.cc_major << "."
      << key.cc_minor << ", " << key.sm_count << " SMs, " << info.device.uuid
      << ")\n"
      << "# driver " << info.device.driver_version << ", cuDNN "
      << CudnnVersionText(key.cudnn_version) << " (cudnnGetVersion "
      << key.cudnn_version << "), CUDA runtime "
      << CudaVersionText(key.cuda_runtime_version) << "\n"
      << "# command: " << info.command_line << "\n"
      << "# " << info.problems << " problems (" << info.duplicates
      << " duplicates dropped, " << info.dropped_by_limit
      << " past --limit); truth: " << info.launch_mode
      << " launches, medians of " << info.rounds << " interleaved rounds ("
      << info.truth_order << "), samples >= " << info.min_sample_ms << " ms, "
      << info.warmup_ms
      << " ms warm-up per problem; the search's re-timing samples start at "
      << info.retime_start << "\n";
}

std::string ProgressLine(size_t index, size_t total,
                         const ProblemMeasurement& m) {
  const ConvProblem& p = m.problem.problem;
  std::string line =
      absl::StrCat("[", index + 1, "/", total, "] ", m.problem.source, " (",
                   PassName(m), " ", DtypeLabel(p), " ", LayoutText(m), " ",
                   tuner::ShapeSummary(p), "): ");
  if (!m.error.empty()) return absl::StrCat(line, "error: ", m.error);
  for (PickKind kind : kPickKinds) {
    const Pick& pick = m.pick(kind);
    absl::StrAppend(&line, PickKindName(kind), " ");
    if (std::optional<double> r = PickRatio(m, kind)) {
      absl::StrAppend(&line, Ratio(*r), " (", AlgoText(pick.algo, pick.math),
                      ")  ");
    } else {
      absl::StrAppend(&line, pick.found ? "untimed  " : "none  ");
    }
  }
  const TimedCandidate* best = BestCandidate(m);
  absl::StrAppend(&line, "| best ",
                  best ? absl::StrCat(AlgoText(best->algo, best->math), " ",
                                      Ms(best->median_ms), " ms")
                       : "-",
                  ", ", m.candidates.size(), " candidates, search ",
                  absl::StrFormat("%.3f", m.search_s), " s (its find ",
                  absl::StrFormat("%.1f", m.phases.find_ms), " ms, screen ",
                  absl::StrFormat("%.1f", m.phases.screen_ms), ", retime ",
                  absl::StrFormat("%.1f", m.phases.retime_ms), ", verify ",
                  absl::StrFormat("%.1f", m.phases.verify_ms), ", setup ",
                  absl::StrFormat("%.1f", m.phases.setup_ms), "), find ",
                  absl::StrFormat("%.3f", m.find_s), " s (first ",
                  absl::StrFormat("%.3f", m.find_cold_s), " s)");
  return line;
}

void PrintSummaryTables(std::ostream& out,
                        const std::vector<GroupSummary>& summaries) {
  tuner::Table groups = SummaryTable();
  tuner::Table overall = SummaryTable();
  for (const GroupSummary& g : summaries) {
    (g.overall ? overall : groups).AddRow(SummaryRow(g));
  }
  out << "\nper model set, pass, dtype and layout (ratio = pick's time / "
         "best time; >5%: picks more than 5 % slower / picks timed)\n";
  groups.Print(out);
  out << "\noverall per pass and dtype\n";
  overall.Print(out);
}

nlohmann::json MeasurementToJson(const ProblemMeasurement& m) {
  const ConvProblem& p = m.problem.problem;
  nlohmann::json j = {{"set", m.problem.set},
                      {"source", m.problem.source},
                      {"key", p.ToText()},
                      {"pass", PassName(m)},
                      {"dtype", DtypeLabel(p)},
                      {"layout", LayoutText(m)},
                      {"problem", tuner::ProblemToJson(p)}};
  if (!m.error.empty()) j["error"] = m.error;
  nlohmann::json picks;
  for (PickKind kind : kPickKinds) {
    picks[std::string(PickKindName(kind))] = PickToJson(m, kind);
  }
  j["picks"] = picks;
  if (const TimedCandidate* best = BestCandidate(m)) {
    j["best"] = {{"algo", best->algo},
                 {"math", std::string(MathTypeName(best->math))},
                 {"median_ms", best->median_ms}};
  }
  nlohmann::json ranking = nlohmann::json::array();
  for (const AlgoResult& r : m.ranking) ranking.push_back(tuner::AlgoToJson(r));
  j["tunedb_search"] = {{"wall_s", m.search_s},
                        {"workspace_cap_bytes", m.workspace_cap_bytes},
                        {"verified", m.verified},
                        {"phases_ms",
                         {{"setup", m.phases.setup_ms},
                          {"find", m.phases.find_ms},
                          {"screen", m.phases.screen_ms},
                          {"retime", m.phases.retime_ms},
                          {"verify", m.phases.verify_ms}}},
                        {"ranking", ranking}};
  nlohmann::json runs = nlohmann::json::array();
  for (const FindRun& run : m.find_runs) {
    nlohmann::json entries = nlohmann::json::array();
    for (const AlgoPerf& e : run.entries) entries.push_back(PerfToJson(e));
    nlohmann::json r = {{"math", std::string(MathTypeName(run.math))},
                        {"wall_s", run.wall_s},
                        {"entries", entries}};
    if (!run.error.empty()) r["error"] = run.error;
    runs.push_back(r);
  }
  j["cudnn_find"] = {
      {"wall_s", m.find_s}, {"cold_wall_s", m.find_cold_s}, {"runs", runs}};
  nlohmann::json heuristic = nlohmann::json::array();
  for (const AlgoPerf& e : m.heuristic_entries) {
    heuristic.push_back(PerfToJson(e));
  }
  j["heuristic_entries"] = heuristic;
  nlohmann::json candidates = nlohmann::json::array();
  for (const TimedCandidate& c : m.candidates) {
    nlohmann::json cj = {{"algo", c.algo},
                         {"math", std::string(MathTypeName(c.math))},
                         {"workspace_bytes", c.workspace_bytes},
                         {"found_by", c.found_by},
                         {"batch", c.batch},
                         {"graphed", c.graphed},
                         {"samples_ms", c.samples_ms}};
    if (c.timed()) cj["median_ms"] = c.median_ms;
    if (!c.error.empty()) cj["error"] = c.error;
    candidates.push_back(cj);
  }
  j["candidates"] = candidates;
  if (m.switch_matrix) {
    const SwitchMatrixResult& s = *m.switch_matrix;
    nlohmann::json members = nlohmann::json::array();
    for (const SwitchMatrixResult::Member& mem : s.members) {
      members.push_back({{"algo", mem.algo},
                         {"math", std::string(MathTypeName(mem.math))},
                         {"steady_ms", mem.steady_ms}});
    }
    j["switch_matrix"] = {{"members", members},
                          {"first_ms", s.first_ms},
                          {"first_host_ms", s.first_host_ms},
                          {"run_host_ms", s.run_host_ms},
                          {"alternating_host_ms", s.alternating_host_ms}};
    if (!s.error.empty()) j["switch_matrix"]["error"] = s.error;
  }
  return j;
}

nlohmann::json SummaryToJson(const GroupSummary& g) {
  nlohmann::json j = {{"set", g.set},
                      {"pass", g.pass},
                      {"dtype", g.dtype},
                      {"layout", g.layout},
                      {"overall", g.overall},
                      {"problems", g.problems},
                      {"measured", g.measured},
                      {"errors", g.errors},
                      {"search_s", g.search_s},
                      {"find_s", g.find_s},
                      {"find_cold_s", g.find_cold_s},
                      {"search_over_find", g.SearchOverFind()}};
  for (PickKind kind : kPickKinds) {
    j[std::string(PickKindName(kind))] = PickSummaryToJson(g.pick(kind));
  }
  return j;
}

nlohmann::json ReportJson(const RunInfo& info,
                          const std::vector<ProblemMeasurement>& measurements,
                          const std::vector<GroupSummary>& summaries) {
  const DeviceKey& key = info.device.key;
  nlohmann::json run = {
      {"command_line", info.command_line},
      {"gpu", key.gpu_model},
      {"gpu_uuid", info.device.uuid},
      {"device_key", key.ToText()},
      {"driver", info.device.driver_version},
      {"cudnn_version", key.cudnn_version},
      {"cudnn_version_text", CudnnVersionText(key.cudnn_version)},
      {"cuda_runtime_version", key.cuda_runtime_version},
      {"launch_mode", info.launch_mode},
      {"rounds", info.rounds},
      {"warmup_ms", info.warmup_ms},
      {"min_sample_ms", info.min_sample_ms},
      {"truth_order", info.truth_order},
      {"retime_start", info.retime_start},
      {"problems", info.problems},
      {"duplicates", info.duplicates},
      {"dropped_by_limit", info.dropped_by_limit},
      {"slower_thresholds", {kOver5Pct, kOver10Pct}}};
  nlohmann::json problems = nlohmann::json::array();
  for (const ProblemMeasurement& m : measurements) {
    problems.push_back(MeasurementToJson(m));
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const GroupSummary& g : summaries) rows.push_back(SummaryToJson(g));
  return {{"run", run}, {"problems", problems}, {"summaries", rows}};
}

void WriteCsv(std::ostream& out,
              const std::vector<ProblemMeasurement>& measurements) {
  std::vector<std::string> columns = {"set",       "source",    "pass",
                                      "dtype",     "layout",    "key",
                                      "best_algo", "best_math", "best_ms"};
  for (PickKind kind : kPickKinds) {
    const std::string who(PickKindName(kind));
    for (const char* what : {"_algo", "_math", "_ms", "_ratio"}) {
      columns.push_back(who + what);
    }
  }
  columns.insert(columns.end(), {"search_s", "find_s", "find_cold_s",
                                 "candidates", "workspace_cap_bytes", "error"});
  tuner::Table table(std::move(columns));
  for (const ProblemMeasurement& m : measurements) {
    const TimedCandidate* best = BestCandidate(m);
    std::vector<std::string> row = {
        m.problem.set,
        m.problem.source,
        PassName(m),
        DtypeLabel(m.problem.problem),
        LayoutText(m),
        m.problem.problem.ToText(),
        best ? absl::StrCat(best->algo) : "",
        best ? std::string(MathTypeName(best->math)) : "",
        best ? absl::StrCat(best->median_ms) : ""};
    for (PickKind kind : kPickKinds) {
      const Pick& p = m.pick(kind);
      const TimedCandidate* c =
          p.found ? FindCandidate(m, p.algo, p.math) : nullptr;
      const std::optional<double> r = PickRatio(m, kind);
      row.push_back(p.found ? absl::StrCat(p.algo) : "");
      row.push_back(p.found ? std::string(MathTypeName(p.math)) : "");
      row.push_back(c != nullptr && c->timed() ? absl::StrCat(c->median_ms)
                                               : "");
      row.push_back(r ? absl::StrCat(*r) : "");
    }
    row.insert(row.end(),
               {absl::StrCat(m.search_s), absl::StrCat(m.find_s),
                absl::StrCat(m.find_cold_s), absl::StrCat(m.candidates.size()),
                absl::StrCat(m.workspace_cap_bytes), m.error});
    table.AddRow(std::move(row));
  }
  table.PrintCsv(out);
}

}  // namespace tunedb::regret
