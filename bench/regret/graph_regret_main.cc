// tunedb_graph_regret: the graph API's figures on a real GPU, for problems a
// daemon has tuned with `tunedb prewarm --api graph` into a database file.
// Three phases, each meant for a fresh process:
//
//   --phase quality  For every problem: a tunedb search in this process
//                    (its cost and phases, beside the benchmark mode's
//                    below); tunedb's stored choice (its plan loaded, and
//                    apart rebuilt from engine id + knobs), heuristic
//                    mode A's first config that builds, and what PyTorch's
//                    benchmark mode picks (every plan of heuristic mode
//                    INSTANT plus the fallback list built and timed once,
//                    the fastest kept), re-timed side by side: interleaved
//                    rounds, each sample a batch of direct
//                    cudnnBackendExecute calls lasting >= --min-sample-ms,
//                    medians. Also what that benchmark mode cost here.
//   --phase load     The plans a fresh process needs, loaded from the
//                    stored serialized plans.
//   --phase build    The same plans built from engine id + knobs (what a
//                    process without the blobs compiles).
//   --phase agree    Two exports of the same keys (--judged, --reference:
//                    a revalidation and a full search, docs/revalidation.md)
//                    judged against each other: for every key of this
//                    process's cuDNN, both records' choices re-timed side by
//                    side as above; judged / reference per key, the share
//                    within 2 %, the worst and the geometric mean. Each
//                    side's plans loaded from the records where they load
//                    (--judged-plan/--reference-plan stored) or built from
//                    engine id + knobs (built): the same file on both sides,
//                    stored against built, times loaded plans against
//                    built ones. No --db.
//
//   tunedb_graph_regret --db tunedb.db --model resnet50 --batch 64
//       --dtype fp16 --layout nhwc --phase quality --json out.json
//   tunedb_graph_regret --phase agree --judged revalidated-9.19.jsonl
//       --reference full-9.19.jsonl --json agree.json
//
// Exit status: 0 done, 1 nothing measured or the GPU failed, 2 bad flags,
// 77 no usable GPU.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/regret/batch_timer.h"
#include "bench/regret/choice_pairs.h"
#include "bench/regret/problem_set.h"
#include "common/sealed_plan.h"
#include "common/status_macros.h"
#include "cudnn/backend_graph.h"
#include "cudnn/cudnn_conv.h"
#include "cudnn/cudnn_device.h"
#include "cudnn/cudnn_handles.h"
#include "cudnn/cudnn_status.h"
#include "nlohmann/json.hpp"
#include "server/search/cudnn_finder.h"
#include "server/search/graph_search.h"
#include "server/search/run_timer.h"
#include "server/search/sample_stats.h"
#include "store/store.h"

namespace tunedb::regret {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct Flags {
  ProblemSetSpec spec;
  std::string db;
  std::string phase = "quality";
  std::string json;
  std::string judged, reference;  // --phase agree: export files
  // --phase agree: each side's plans: "stored" (loaded where the record
  // has one that loads, else built) or "built" (from engine id + knobs).
  std::string judged_plan = "stored", reference_plan = "stored";
  // --phase agree: time two choices of one config too (an A/A check of
  // the timing itself) instead of counting them 1.
  bool time_same_config = false;
  int align = 16;
  int rounds = 15;
  double min_sample_ms = 1.0;
  int64_t workspace_cap = int64_t{1} << 30;
};

struct Context {
  CudnnFinder* finder;  // quality phase: a search in this process
  cudnnHandle_t handle;
  cudaStream_t stream;
  DeviceKey device;
  Store* store;
  void* workspace;
  size_t workspace_bytes;
};

std::string ConfigName(const AlgoResult& r) {
  return absl::StrCat(r.algo, "[", KnobsText(r.knobs), "]");
}

// The stored record's choice for `p`, or why there is none.
absl::StatusOr<AlgoResult> StoredChoice(const Context& ctx,
                                        const ConvProblem& p) {
  ProblemKey key{ctx.device, p};
  absl::StatusOr<std::optional<Record>> record = ctx.store->Get(key);
  if (!record.ok()) return record.status();
  if (!record->has_value()) {
    return absl::NotFoundError("not tuned (prewarm --api graph first)");
  }
  std::optional<AlgoResult> choice = Choose(**record, Constraints());
  if (!choice.has_value()) return absl::NotFoundError("no OK config stored");
  return *choice;
}

// One config as a candidate: its plan added to `launcher`.
absl::StatusOr<AlgoResult> AddCandidate(const ConvOpGraph& graph,
                                        GraphLauncher& launcher,
                                        const EngineConfig& config) {
  ASSIGN_OR_RETURN(BackendDescriptor plan,
                   graph.BuildPlan(config.descriptor.get()));
  AlgoResult r;
  r.algo = config.engine;
  r.knobs = config.knobs;
  r.numerical_notes = config.numerical_notes;
  ASSIGN_OR_RETURN(r.workspace_bytes, PlanWorkspaceBytes(plan.get()));
  launcher.Add(r, std::move(plan));
  return r;
}

// A problem's buffers (seeded data) and operation graph on the GPU.
struct GraphOnGpu {
  std::unique_ptr<CudnnConv> conv;
  ConvOpGraph graph;
};
absl::StatusOr<GraphOnGpu> SetUpGraph(const Context& ctx,
                                      const ConvProblem& p) {
  ASSIGN_OR_RETURN(std::unique_ptr<CudnnConv> conv,
                   CudnnConv::Create(p, ctx.handle, ctx.stream, /*seed=*/11));
  ASSIGN_OR_RETURN(ConvOpGraph graph, ConvOpGraph::Create(p, ctx.handle));
  return GraphOnGpu{std::move(conv), std::move(graph)};
}

// A stored choice's plan, unsealed for `key` and loaded on `handle`.
absl::StatusOr<BackendDescriptor> LoadStoredPlan(cudnnHandle_t handle,
                                                 const ProblemKey& key,
                                                 const AlgoResult& r) {
  ASSIGN_OR_RETURN(absl::string_view plan,
                   OpenSealedPlan(r.plan, key, r.algo, r.knobs));
  return LoadPlan(handle, std::string(plan));
}

// `r`'s config on `graph` as a candidate of `launcher`: with `use_stored`,
// its stored plan loaded where it has one that loads (then *loaded is set),
// else built from engine id + knobs.
absl::StatusOr<AlgoResult> AddStoredChoice(cudnnHandle_t handle,
                                           const ProblemKey& key,
                                           const ConvOpGraph& graph,
                                           GraphLauncher& launcher,
                                           const AlgoResult& r, bool use_stored,
                                           bool* loaded_plan) {
  *loaded_plan = false;
  if (use_stored && !r.plan.empty()) {
    absl::StatusOr<BackendDescriptor> loaded = LoadStoredPlan(handle, key, r);
    if (loaded.ok()) {
      *loaded_plan = true;
      AlgoResult added = r;
      added.plan.clear();
      ASSIGN_OR_RETURN(added.workspace_bytes, PlanWorkspaceBytes(loaded->get()));
      launcher.Add(added, *std::move(loaded));
      return added;
    }
  }
  ASSIGN_OR_RETURN(EngineConfig config, graph.ConfigFor(r.algo, r.knobs));
  return AddCandidate(graph, launcher, config);
}

Json MeasureQuality(const Context& ctx, const Flags& f, const RegretProblem& rp,
                    double* pytorch_cost_ms, double* search_cost_ms) {
  Json out = {{"source", rp.source}, {"problem", rp.problem.ToText()}};
  const ConvProblem& p = rp.problem;
  // What tunedb's search costs, here, beside PyTorch's benchmark mode.
  {
    const Clock::time_point s0 = Clock::now();
    absl::StatusOr<SearchResult> r = ctx.finder->Search(0, p, SearchOptions());
    *search_cost_ms = MsSince(s0);
    if (r.ok()) {
      const SearchPhases& ph = r->phases;
      out["search"] = {
          {"wall_ms", *search_cost_ms},  {"setup_ms", ph.setup_ms},
          {"candidates_ms", ph.find_ms}, {"heuristics_ms", ph.heuristics_ms},
          {"screen_ms", ph.screen_ms},   {"retime_ms", ph.retime_ms},
          {"verify_ms", ph.verify_ms},   {"configs", r->results.size()}};
    } else {
      out["search"] = {{"error", std::string(r.status().message())}};
    }
  }
  absl::StatusOr<AlgoResult> stored = StoredChoice(ctx, p);
  if (!stored.ok()) {
    out["error"] = std::string(stored.status().message());
    return out;
  }
  absl::StatusOr<GraphOnGpu> on_gpu = SetUpGraph(ctx, p);
  if (!on_gpu.ok()) {
    out["error"] = std::string(on_gpu.status().message());
    return out;
  }
  const ConvOpGraph* graph = &on_gpu->graph;
  const CudnnConv* conv = on_gpu->conv.get();
  GraphLauncher launcher(ctx.handle, ctx.stream, conv->buffers());
  absl::StatusOr<CudaEvent> start = CudaEvent::Create();
  absl::StatusOr<CudaEvent> stop = CudaEvent::Create();
  if (!start.ok() || !stop.ok()) {
    out["error"] = "cannot create CUDA events";
    return out;
  }
  auto fits = [&](const AlgoResult& r) {
    return r.workspace_bytes <= static_cast<int64_t>(ctx.workspace_bytes);
  };

  // PyTorch's benchmark mode: INSTANT + fallback, each built, timed once.
  const Clock::time_point pt0 = Clock::now();
  std::optional<AlgoResult> pytorch;
  double pytorch_ms = 0;
  int pytorch_tried = 0;
  absl::StatusOr<std::vector<EngineConfig>> instant =
      graph->Configs({HeuristicMode::kInstant, HeuristicMode::kFallback});
  if (instant.ok()) {
    for (const EngineConfig& c : *instant) {
      if (!GraphPolicyAllows(p, c.numerical_notes)) continue;
      absl::StatusOr<AlgoResult> r = AddCandidate(*graph, launcher, c);
      if (!r.ok() || !fits(*r)) continue;
      ++pytorch_tried;
      absl::StatusOr<DirectSample> s =
          TimeDirectRuns(launcher, *r, ctx.stream, ctx.workspace,
                         static_cast<size_t>(r->workspace_bytes), 1,
                         start->get(), stop->get());
      if (!s.ok()) continue;
      if (!pytorch.has_value() || s->launch_ms < pytorch_ms) {
        pytorch = *r;
        pytorch_ms = s->launch_ms;
      }
    }
  }
  *pytorch_cost_ms = MsSince(pt0);
  out["pytorch_benchmark_ms"] = *pytorch_cost_ms;
  out["pytorch_configs_timed"] = pytorch_tried;

  // Heuristic mode A's first config that builds.
  std::optional<AlgoResult> heuristic;
  absl::StatusOr<std::vector<EngineConfig>> mode_a =
      graph->Configs({HeuristicMode::kA});
  if (mode_a.ok()) {
    for (const EngineConfig& c : *mode_a) {
      if (!GraphPolicyAllows(p, c.numerical_notes)) continue;
      absl::StatusOr<AlgoResult> r = AddCandidate(*graph, launcher, c);
      if (r.ok() && fits(*r)) {
        heuristic = *r;
        break;
      }
    }
  }
  // tunedb's choice as a caller gets it (GetExecutionPlan): its stored
  // plan loaded; and, apart, built again from its engine id and knobs (the
  // fallback when a blob is refused), in a launcher of its own.
  GraphLauncher rebuilt_launcher(ctx.handle, ctx.stream, conv->buffers());
  absl::StatusOr<EngineConfig> tuned_config =
      graph->ConfigFor(stored->algo, stored->knobs);
  absl::StatusOr<AlgoResult> rebuilt =
      tuned_config.ok() ? AddCandidate(*graph, rebuilt_launcher, *tuned_config)
                        : absl::StatusOr<AlgoResult>(tuned_config.status());
  absl::StatusOr<AlgoResult> tunedb = rebuilt;
  if (!stored->plan.empty()) {
    absl::StatusOr<BackendDescriptor> loaded =
        LoadStoredPlan(ctx.handle, ProblemKey{ctx.device, p}, *stored);
    if (loaded.ok()) {
      AlgoResult r = *stored;
      r.plan.clear();
      absl::StatusOr<int64_t> ws = PlanWorkspaceBytes(loaded->get());
      if (ws.ok()) r.workspace_bytes = *ws;
      launcher.Add(r, *std::move(loaded));
      tunedb = r;
    } else {
      out["plan_load_error"] = std::string(loaded.status().message());
    }
  }
  if (!tunedb.ok()) {
    out["error"] = absl::StrCat("tunedb's engine ", ConfigName(*stored),
                                " did not build: ", tunedb.status().message());
    return out;
  }

  // The distinct picks, re-timed side by side.
  struct Pick {
    std::string name;
    AlgoResult config;
    GraphLauncher* launcher;
    std::string id;  // timers are per (launcher, config)
  };
  std::vector<Pick> picks = {{"tunedb", *tunedb, &launcher, ""}};
  if (pytorch.has_value()) {
    picks.push_back({"pytorch_benchmark", *pytorch, &launcher, ""});
  }
  if (heuristic.has_value()) {
    picks.push_back({"heuristic_a", *heuristic, &launcher, ""});
  }
  if (rebuilt.ok()) {
    picks.push_back({"tunedb_rebuilt", *rebuilt, &rebuilt_launcher, "r:"});
  }
  for (Pick& pick : picks) pick.id += ConfigName(pick.config);
  std::map<std::string, std::unique_ptr<BatchTimer>> timers;
  std::map<std::string, std::vector<double>> samples;
  BatchTimer::Options options;
  options.mode = LaunchMode::kDirect;
  options.min_sample_ms = f.min_sample_ms;
  for (const Pick& pick : picks) {
    const std::string& id = pick.id;
    if (timers.count(id)) continue;
    absl::StatusOr<std::unique_ptr<BatchTimer>> t = BatchTimer::Create(
        pick.launcher, pick.config, ctx.stream, ctx.workspace,
        static_cast<size_t>(pick.config.workspace_bytes), options);
    if (!t.ok()) {
      out["error"] = absl::StrCat(pick.name, " ", id,
                                  " does not run: ", t.status().message());
      return out;
    }
    timers[id] = *std::move(t);
  }
  for (int round = 0; round < f.rounds; ++round) {
    for (auto& [id, timer] : timers) {
      absl::StatusOr<double> ms = timer->Sample();
      if (ms.ok()) samples[id].push_back(*ms);
    }
  }
  double best = 0;
  for (auto& [id, s] : samples) {
    const double m = Median(s);
    if (best == 0 || m < best) best = m;
  }
  for (const Pick& pick : picks) {
    const double m = Median(samples[pick.id]);
    out[pick.name] = {{"engine", pick.config.algo},
                      {"knobs", KnobsText(pick.config.knobs)},
                      {"median_ms", m},
                      {"vs_best", best > 0 ? m / best : 0}};
  }
  return out;
}

// The plan of every problem's stored choice, loaded (`load`) or built from
// engine id + knobs: {count, failed, total_ms, per plan}. Then every plan
// once more in the same process ("again_ms"): the first pass also pays
// what a process pays once per kernel (loading its module), the second
// only the deserialization or the build.
Json ObtainPlans(const Context& ctx, const std::vector<RegretProblem>& ps,
                 bool load) {
  int ok = 0, failed = 0, rtc = 0;
  double total_ms = 0, again_ms = 0, plan_bytes = 0;
  Json failures = Json::array();
  Json each = Json::array();
  std::vector<std::pair<const RegretProblem*, AlgoResult>> stored_plans;
  for (const RegretProblem& rp : ps) {
    absl::StatusOr<AlgoResult> stored = StoredChoice(ctx, rp.problem);
    if (!stored.ok()) {
      ++failed;
      failures.push_back({{"source", rp.source},
                          {"error", std::string(stored.status().message())}});
      continue;
    }
    stored_plans.emplace_back(&rp, *std::move(stored));
  }
  auto obtain = [&](const RegretProblem& rp, const AlgoResult& stored) {
    if (load) {
      return LoadStoredPlan(ctx.handle, ProblemKey{ctx.device, rp.problem},
                            stored)
          .status();
    }
    absl::StatusOr<ConvOpGraph> graph =
        ConvOpGraph::Create(rp.problem, ctx.handle);
    absl::StatusOr<EngineConfig> config =
        graph.ok() ? graph->ConfigFor(stored.algo, stored.knobs)
                   : absl::StatusOr<EngineConfig>(graph.status());
    return config.ok() ? graph->BuildPlan(config->descriptor.get()).status()
                       : config.status();
  };
  for (const auto& [rp, stored] : stored_plans) {
    const bool compiles =
        (stored.behavior_notes & NoteBit(kBehaviorNoteRuntimeCompilation)) != 0;
    if (compiles) ++rtc;
    const Clock::time_point t0 = Clock::now();
    const absl::Status s = obtain(*rp, stored);
    const double ms = MsSince(t0);
    total_ms += ms;
    if (load) plan_bytes += static_cast<double>(stored.plan.size());
    each.push_back({{"source", rp->source},
                    {"engine", stored.algo},
                    {"runtime_compiled", compiles},
                    {"plan_bytes", stored.plan.size()},
                    {"ms", ms}});
    if (s.ok()) {
      ++ok;
    } else {
      ++failed;
      failures.push_back(
          {{"source", rp->source}, {"error", std::string(s.message())}});
    }
  }
  for (size_t i = 0; i < stored_plans.size(); ++i) {
    const Clock::time_point t0 = Clock::now();
    (void)obtain(*stored_plans[i].first, stored_plans[i].second);
    const double ms = MsSince(t0);
    again_ms += ms;
    each[i]["again_ms"] = ms;
  }
  return {{"mode", load ? "load stored plans" : "build from engine + knobs"},
          {"plans", ok},
          {"failed", failed},
          {"runtime_compiled_engines", rtc},
          {"total_ms", total_ms},
          {"again_ms", again_ms},
          {"plan_bytes", plan_bytes},
          {"failures", failures},
          {"each", each}};
}

// The timer of choice `r` on `launcher`: its plan as AddStoredChoice adds
// it (*loaded says which way), within the workspace offered.
absl::StatusOr<std::unique_ptr<BatchTimer>> ChoiceTimer(
    const Context& ctx, const Flags& f, const ProblemKey& key,
    const ConvOpGraph& graph, GraphLauncher& launcher, const AlgoResult& r,
    bool use_stored, bool* loaded) {
  ASSIGN_OR_RETURN(AlgoResult added,
                   AddStoredChoice(ctx.handle, key, graph, launcher, r,
                                   use_stored, loaded));
  if (added.workspace_bytes > static_cast<int64_t>(ctx.workspace_bytes)) {
    return absl::ResourceExhaustedError("needs more workspace than offered");
  }
  BatchTimer::Options options;
  options.mode = LaunchMode::kDirect;
  options.min_sample_ms = f.min_sample_ms;
  return BatchTimer::Create(&launcher, added, ctx.stream, ctx.workspace,
                            static_cast<size_t>(added.workspace_bytes),
                            options);
}

// One key's two choices re-timed side by side (--phase agree): {key,
// judged, reference, ratio = judged / reference}; {key, error} where either
// does not build or run. Two choices of one config, both stored or both
// built, are one kernel: ratio 1, not timed (unless --time-same-config).
Json MeasureAgreement(const Context& ctx, const Flags& f,
                      const ChoicePair& pair) {
  Json out = {{"key", pair.key.ToText()},
              {"judged", ConfigName(pair.judged)},
              {"reference", ConfigName(pair.reference)}};
  if (pair.same_config() && f.judged_plan == f.reference_plan &&
      !f.time_same_config) {
    out["same_config"] = true;
    out["ratio"] = 1.0;
    return out;
  }
  const ConvProblem& p = pair.key.problem;
  absl::StatusOr<GraphOnGpu> on_gpu = SetUpGraph(ctx, p);
  if (!on_gpu.ok()) {
    out["error"] = std::string(on_gpu.status().message());
    return out;
  }
  const ConvOpGraph* graph = &on_gpu->graph;
  const CudnnConv* conv = on_gpu->conv.get();
  // A launcher per side: the same config may run as a loaded and as a
  // built plan.
  GraphLauncher launchers[2] = {
      GraphLauncher(ctx.handle, ctx.stream, conv->buffers()),
      GraphLauncher(ctx.handle, ctx.stream, conv->buffers())};
  std::vector<std::unique_ptr<BatchTimer>> timers;
  const AlgoResult* sides[2] = {&pair.judged, &pair.reference};
  const bool use_stored[2] = {f.judged_plan == "stored",
                              f.reference_plan == "stored"};
  const char* names[2] = {"judged_plan", "reference_plan"};
  for (int i = 0; i < 2; ++i) {
    bool loaded = false;
    absl::StatusOr<std::unique_ptr<BatchTimer>> t =
        ChoiceTimer(ctx, f, pair.key, *graph, launchers[i], *sides[i],
                    use_stored[i], &loaded);
    out[names[i]] = loaded ? "loaded" : "built";
    if (!t.ok()) {
      out["error"] = absl::StrCat(ConfigName(*sides[i]), " does not run: ",
                                  t.status().message());
      return out;
    }
    timers.push_back(*std::move(t));
  }
  // Equally long batches: a batch sized while the clock still rose would
  // be shorter, and charge its side more per run.
  const int batch = std::max(timers[0]->batch(), timers[1]->batch());
  for (std::unique_ptr<BatchTimer>& t : timers) {
    const absl::Status sized = t->SetBatch(batch);
    if (!sized.ok()) {
      out["error"] = std::string(sized.message());
      return out;
    }
  }
  out["batch"] = batch;
  std::vector<double> samples[2];
  for (int round = 0; round < f.rounds; ++round) {
    // Alternate which goes first, so neither always follows the other.
    for (int k = 0; k < 2; ++k) {
      const int i = (round + k) % 2;
      absl::StatusOr<double> ms = timers[i]->Sample();
      if (ms.ok()) samples[i].push_back(*ms);
    }
  }
  if (samples[0].empty() || samples[1].empty()) {
    out["error"] = "a choice failed every timed sample";
    return out;
  }
  const double judged_ms = Median(samples[0]);
  const double reference_ms = Median(samples[1]);
  out["judged_ms"] = judged_ms;
  out["reference_ms"] = reference_ms;
  out["ratio"] = judged_ms / reference_ms;
  return out;
}

// --phase agree: every paired key of this process's cuDNN, in file order.
int RunAgree(const Context& ctx, const Flags& f, Json& result) {
  absl::StatusOr<ChoicePairs> pairs =
      ReadChoicePairs(f.judged, f.reference, ctx.device.cudnn_version);
  if (!pairs.ok()) {
    std::cerr << "tunedb_graph_regret: " << pairs.status().message() << "\n";
    return 2;
  }
  if (pairs->pairs.empty()) {
    std::cerr << "tunedb_graph_regret: no key of cuDNN "
              << CudnnVersionText(ctx.device.cudnn_version)
              << " is in both files\n";
    return 1;
  }
  // The clock ramps up under load: one pair of two configs, timed and
  // discarded for half a second, warms it.
  for (const ChoicePair& pair : pairs->pairs) {
    if (pair.same_config()) continue;
    for (const Clock::time_point w0 = Clock::now(); MsSince(w0) < 500;) {
      (void)MeasureAgreement(ctx, f, pair);
    }
    break;
  }
  Json rows = Json::array();
  std::vector<double> ratios;
  int same = 0, errors = 0;
  const size_t n = pairs->pairs.size();
  for (size_t i = 0; i < n; ++i) {
    Json row = MeasureAgreement(ctx, f, pairs->pairs[i]);
    if (row.contains("ratio")) {
      ratios.push_back(row["ratio"].get<double>());
      if (row.value("same_config", false)) ++same;
    } else {
      ++errors;
    }
    std::cerr << absl::StrFormat(
        "[%zu/%zu] %s\n", i + 1, n,
        row.contains("ratio") ? absl::StrFormat("%.3f", row["ratio"].get<double>())
                              : row["error"].get<std::string>());
    rows.push_back(std::move(row));
  }
  const AgreementSummary s = SummarizeAgreement(ratios, same);
  result["rows"] = rows;
  result["summary"] = {
      {"keys", n},
      {"measured", s.ratios.ratios},
      {"errors", errors},
      {"same_config", s.same_config},
      {"within_2pct", s.within_tolerance},
      {"share_within_2pct", s.share_within()},
      {"over_10pct", s.ratios.over_10pct},
      {"worst", s.ratios.worst},
      {"geomean", s.ratios.geomean},
      {"skipped_other_version", pairs->other_version},
      {"skipped_unmatched", pairs->unmatched},
      {"skipped_no_choice", pairs->no_choice}};
  std::cout << result["summary"].dump(2) << "\n";
  return 0;
}

// --phase quality over `set`.
int RunQuality(Context& ctx, const Flags& f, const ProblemSet* set,
               Json& result) {
  absl::StatusOr<std::unique_ptr<CudnnFinder>> finder =
      CudnnFinder::Create(CudnnFinder::Options());
  if (!finder.ok()) {
    std::cerr << "tunedb_graph_regret: " << finder.status().message() << "\n";
    return 1;
  }
  ctx.finder = finder->get();
  Json rows = Json::array();
  double pytorch_total = 0, search_total = 0;
  int measured = 0, slower5 = 0, heur_slower5 = 0;
  double log_sum = 0, heur_log_sum = 0, worst = 0;
  int heur_n = 0;
  for (size_t i = 0; i < set->problems.size(); ++i) {
    double pt_ms = 0, search_ms = 0;
    Json row = MeasureQuality(ctx, f, set->problems[i], &pt_ms, &search_ms);
    pytorch_total += pt_ms;
    search_total += search_ms;
    std::cerr << absl::StrFormat("[%zu/%zu] %s\n", i + 1,
                                 set->problems.size(),
                                 set->problems[i].source);
    if (row.contains("tunedb") && row.contains("pytorch_benchmark")) {
      const double ratio =
          row["tunedb"]["median_ms"].get<double>() /
          row["pytorch_benchmark"]["median_ms"].get<double>();
      row["tunedb_vs_pytorch"] = ratio;
      ++measured;
      if (ratio > 1.05) ++slower5;
      worst = std::max(worst, ratio);
      log_sum += std::log(ratio);
      if (row.contains("heuristic_a")) {
        const double h = row["heuristic_a"]["median_ms"].get<double>() /
                         row["pytorch_benchmark"]["median_ms"].get<double>();
        ++heur_n;
        if (h > 1.05) ++heur_slower5;
        heur_log_sum += std::log(h);
      }
    }
    rows.push_back(std::move(row));
  }
  result["rows"] = rows;
  result["summary"] = {
      {"measured", measured},
      {"tunedb_slower_than_pytorch_pick_by_5pct", slower5},
      {"tunedb_vs_pytorch_geomean",
       measured ? std::exp(log_sum / measured) : 0},
      {"tunedb_vs_pytorch_worst", worst},
      {"heuristic_a_slower_than_pytorch_pick_by_5pct", heur_slower5},
      {"heuristic_a_vs_pytorch_geomean",
       heur_n ? std::exp(heur_log_sum / heur_n) : 0},
      {"pytorch_benchmark_emulated_ms", pytorch_total},
      {"tunedb_search_ms", search_total},
      {"search_vs_pytorch_benchmark",
       pytorch_total > 0 ? search_total / pytorch_total : 0}};
  std::cout << result["summary"].dump(2) << "\n";
  return 0;
}

// The problems of --model/--problems as graph-API keys of alignment --align.
absl::StatusOr<ProblemSet> GraphProblemSet(const Flags& f) {
  ASSIGN_OR_RETURN(ProblemSet set, BuildProblemSet(f.spec));
  for (RegretProblem& rp : set.problems) {
    rp.problem.api = ConvApi::kGraph;
    rp.problem.alignment = f.align;
  }
  return set;
}

// Runs f.phase on the set-up GPU; the exit status.
int RunPhase(Context& ctx, const Flags& f, Json& result) {
  absl::StatusOr<DeviceBuffer> ws =
      DeviceBuffer::Allocate(static_cast<size_t>(f.workspace_cap));
  if (!ws.ok()) {
    std::cerr << "tunedb_graph_regret: " << ws.status().message() << "\n";
    return 1;
  }
  ctx.workspace = ws->get();
  ctx.workspace_bytes = ws->bytes();
  if (f.phase == "agree") return RunAgree(ctx, f, result);
  absl::StatusOr<ProblemSet> set = GraphProblemSet(f);
  Store::Options store_options;
  store_options.path = f.db;
  store_options.read_only = true;
  absl::StatusOr<std::unique_ptr<Store>> store =
      set.ok() ? Store::Open(store_options)
               : absl::StatusOr<std::unique_ptr<Store>>(set.status());
  if (!store.ok()) {
    std::cerr << "tunedb_graph_regret: " << store.status().message() << "\n";
    return 2;
  }
  ctx.store = store->get();
  result["problems"] = set->problems.size();
  if (f.phase == "quality") return RunQuality(ctx, f, &*set, result);
  const Clock::time_point t0 = Clock::now();
  Json plans = ObtainPlans(ctx, set->problems, f.phase == "load");
  plans["process_ms"] = MsSince(t0) + result["handle_setup_ms"].get<double>();
  result["plans"] = plans;
  std::cout << plans.dump(2) << "\n";
  return 0;
}

int Main(int argc, char** argv) {
  Flags f;
  CLI::App app(
      "tunedb_graph_regret: graph-API choice quality, plan loading, and two "
      "exports' choices judged against each other, on this GPU");
  app.add_option("--db", f.db,
                 "tunedb database file (prewarmed); all phases but agree");
  app.add_option("--phase", f.phase, "quality, load, build or agree")
      ->check(CLI::IsMember({"quality", "load", "build", "agree"}))
      ->capture_default_str();
  app.add_option("--judged", f.judged,
                 "agree: the export whose choices are judged")
      ->check(CLI::ExistingFile);
  app.add_option("--reference", f.reference,
                 "agree: the export they are judged against")
      ->check(CLI::ExistingFile);
  app.add_option("--judged-plan", f.judged_plan,
                 "agree: the judged side's plans: stored (loaded where the "
                 "record has one that loads, else built) or built")
      ->check(CLI::IsMember({"stored", "built"}))
      ->capture_default_str();
  app.add_flag("--time-same-config", f.time_same_config,
               "agree: time two choices of one config too (an A/A check)");
  app.add_option("--reference-plan", f.reference_plan,
                 "agree: the reference side's plans, as --judged-plan")
      ->check(CLI::IsMember({"stored", "built"}))
      ->capture_default_str();
  app.add_option("--model", f.spec.models, "Built-in model(s)")->delimiter(',');
  app.add_option("--batch", f.spec.batches, "Batch size(s)")->delimiter(',');
  app.add_option("--dtype", f.spec.dtypes, "fp32, fp16, bf16")->delimiter(',');
  app.add_option("--layout", f.spec.layouts, "nchw or nhwc")->delimiter(',');
  app.add_option("--ops", f.spec.ops, "Passes")->capture_default_str();
  app.add_option("--limit", f.spec.limit, "At most N problems");
  app.add_option("--align", f.align, "Alignment of the keys")
      ->capture_default_str();
  app.add_option("--rounds", f.rounds, "Interleaved timing rounds")
      ->capture_default_str();
  app.add_option("--min-sample-ms", f.min_sample_ms, "Shortest timed batch, ms")
      ->capture_default_str();
  app.add_option("--json", f.json, "Write the results here");
  CLI11_PARSE(app, argc, argv);
  const bool agree = f.phase == "agree";
  if (agree ? (f.judged.empty() || f.reference.empty()) : f.db.empty()) {
    std::cerr << "tunedb_graph_regret: "
              << (agree ? "--phase agree needs --judged and --reference"
                        : "--db is required")
              << "\n";
    return 2;
  }
  absl::StatusOr<int> devices = CudaDeviceCount();
  if (!devices.ok() || *devices == 0) {
    std::cerr << "tunedb_graph_regret: no usable GPU\n";
    return 77;
  }
  const Clock::time_point process0 = Clock::now();
  absl::StatusOr<DeviceInfo> info = QueryCudaDevice(0);
  absl::StatusOr<CudnnHandle> handle = CreateCudnnHandle();
  absl::StatusOr<CudaStream> stream = CudaStream::Create();
  if (!info.ok() || !handle.ok() || !stream.ok()) {
    std::cerr << "tunedb_graph_regret: cannot set up the GPU\n";
    return 1;
  }
  cudnnSetStream(handle->get(), stream->get());
  Context ctx{nullptr, handle->get(), stream->get(), info->key,
              nullptr, nullptr,       0};
  Json result = {{"device", info->key.ToText()},
                 {"phase", f.phase},
                 {"handle_setup_ms", MsSince(process0)}};
  const int rc = RunPhase(ctx, f, result);
  if (rc != 0 || f.json.empty()) return rc;
  std::ofstream out(f.json);
  out << result.dump(2) << "\n";
  if (!out) {
    std::cerr << "tunedb_graph_regret: cannot write " << f.json << "\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace tunedb::regret

int main(int argc, char** argv) { return tunedb::regret::Main(argc, argv); }
