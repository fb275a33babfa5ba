#include "server/search/graph_search.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/config_identity.h"
#include "common/math_policy.h"
#include "common/record_results.h"
#include "common/status_macros.h"
#include "cudnn/cudnn_status.h"
#include "cudnn/plan_blob.h"
#include "server/search/algo_failure.h"
#include "server/search/run_timer.h"

namespace tunedb {
namespace {

AlgoResult ResultOf(const EngineConfig& config) {
  AlgoResult r;
  r.algo = config.engine;
  r.knobs = config.knobs;
  r.numerical_notes = config.numerical_notes;
  r.behavior_notes = config.behavior_notes;
  r.math_type = (config.numerical_notes & NoteBit(kNumericalNoteTensorCore))
                    ? MathType::kTensorOp
                    : MathType::kDefault;
  r.deterministic =
      (config.numerical_notes & NoteBit(kNumericalNoteNondeterministic)) == 0;
  // Mode A is the list a framework that does not benchmark builds from.
  if (config.mode == HeuristicMode::kA ||
      config.mode == HeuristicMode::kInstant) {
    r.heuristic_rank = config.rank;
  }
  return r;
}

// The plan of `config` loaded from its stored plan in `stored`, if it has
// one and cuDNN loads it on the graph's handle; r.build_ms is then the
// stored result's (what building it cost).
std::optional<BackendDescriptor> LoadStored(
    const ConvOpGraph& graph, const EngineConfig& config,
    const std::vector<AlgoResult>& stored, AlgoResult& r) {
  for (const AlgoResult& s : stored) {
    if (!SameAlgoAndKnobs(s, r) || s.plan.empty()) continue;
    absl::StatusOr<BackendDescriptor> plan = LoadPlan(graph.handle(), s.plan);
    if (!plan.ok()) return std::nullopt;
    r.build_ms = s.build_ms;
    return *std::move(plan);
  }
  return std::nullopt;
}

// The heuristic ranks of cuDNN's first `count` choices among `configs`:
// the first mode-A configs the problem's policy allows.
std::set<int> FirstChoiceRanks(const ConvProblem& problem,
                               const std::vector<EngineConfig>& configs,
                               int count) {
  std::set<int> ranks;
  for (const EngineConfig& config : configs) {
    const int rank = ResultOf(config).heuristic_rank;
    if (rank > 0 && GraphPolicyAllows(problem, config.numerical_notes)) {
      ranks.insert(rank);
    }
  }
  while (static_cast<int>(ranks.size()) > std::max(count, 0)) {
    ranks.erase(std::prev(ranks.end()));
  }
  return ranks;
}

}  // namespace

void GraphLauncher::Add(const AlgoResult& r, BackendDescriptor plan) {
  Entry& e = plans_[CandidateKeyOf(r)];
  e.plan = std::move(plan);
  e.pack = BackendDescriptor();
  e.pack_workspace = nullptr;
}

cudnnBackendDescriptor_t GraphLauncher::PlanOf(const AlgoResult& r) const {
  auto it = plans_.find(CandidateKeyOf(r));
  return it == plans_.end() ? nullptr : it->second.plan.get();
}

absl::Status GraphLauncher::Launch(const AlgoResult& r, void* workspace,
                                   size_t /*workspace_bytes*/) {
  auto it = plans_.find(CandidateKeyOf(r));
  if (it == plans_.end() || it->second.plan.get() == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("engine ", r.algo, " [", KnobsText(r.knobs),
                     "] has no execution plan"));
  }
  Entry& e = it->second;
  if (e.pack.get() == nullptr || e.pack_workspace != workspace) {
    ASSIGN_OR_RETURN(e.pack, MakeVariantPack({buffers_.x, buffers_.w,
                                              buffers_.y, workspace}));
    e.pack_workspace = workspace;
  }
  RETURN_IF_ERROR(
      CudnnStatusToAbsl(cudnnSetStream(handle_, stream_), "cudnnSetStream"));
  return ExecutePlan(handle_, e.plan.get(), e.pack.get());
}

namespace {

// The plan of `config` for `r`: its stored plan loaded, else built, unless
// it compiles at run time and the search's compile budget is spent
// (*compiled: the build time spent on such configs so far). nullopt, with
// r's status and error set, where there is none; an error only for a
// broken CUDA context.
absl::StatusOr<std::optional<BackendDescriptor>> PlanFor(
    const ConvOpGraph& graph, const EngineConfig& config,
    const CudnnFinderOptions& options, const SearchOptions& search,
    SearchPhases* phases, std::chrono::steady_clock::duration* compiled,
    AlgoResult& r) {
  std::optional<BackendDescriptor> loaded =
      LoadStored(graph, config, search.stored_plans, r);
  if (loaded.has_value()) ++phases->plans_loaded;
  const bool compiles = !loaded.has_value() && RuntimeCompiled(r);
  if (compiles &&
      *compiled >= absl::ToChronoMilliseconds(options.graph_compile_budget)) {
    r.status = AlgoStatus::kFailed;
    r.error = "not built: the search's runtime-compilation budget was spent";
    return std::nullopt;
  }
  const bool loaded_plan = loaded.has_value();
  const auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<BackendDescriptor> plan =
      loaded.has_value() ? *std::move(loaded)
                         : graph.BuildPlan(config.descriptor.get());
  const auto built = std::chrono::steady_clock::now() - t0;
  if (compiles) *compiled += built;
  if (!loaded_plan) {
    r.build_ms = std::chrono::duration<double, std::milli>(built).count();
  }
  if (!plan.ok()) {
    RETURN_IF_ERROR(CheckStickyError());
    r.status = absl::IsUnimplemented(plan.status()) ||
                       absl::IsFailedPrecondition(plan.status())
                   ? AlgoStatus::kNotSupported
                   : AlgoStatus::kFailed;
    r.error = std::string(plan.status().message());
    return std::nullopt;
  }
  return std::optional<BackendDescriptor>(*std::move(plan));
}

// One timed run of `plan` for `r` (added to `launcher`) where its
// workspace fits the one offered: r's status and times, or its error. An
// error only for a broken CUDA context.
absl::Status TimeConfig(BackendDescriptor plan, GraphLauncher& launcher,
                        cudaStream_t stream, DeviceSpan workspace,
                        const CudaEvent& start, const CudaEvent& stop,
                        AlgoResult& r) {
  ASSIGN_OR_RETURN(r.workspace_bytes, PlanWorkspaceBytes(plan.get()));
  if (r.workspace_bytes > static_cast<int64_t>(workspace.bytes)) {
    r.status = AlgoStatus::kFailed;
    r.error = absl::StrCat("needs ", r.workspace_bytes,
                           " bytes of workspace, more than the ",
                           workspace.bytes, " offered");
    return absl::OkStatus();
  }
  launcher.Add(r, std::move(plan));
  absl::StatusOr<DirectSample> sample =
      TimeDirectRuns(launcher, r, stream, workspace.ptr,
                     static_cast<size_t>(r.workspace_bytes), /*batch=*/1,
                     start.get(), stop.get());
  if (!sample.ok()) {
    RETURN_IF_ERROR(CheckStickyError());
    r.status = AlgoStatus::kFailed;
    r.error = std::string(sample.status().message());
    return absl::OkStatus();
  }
  r.status = AlgoStatus::kOk;
  r.launch = Timing{sample->launch_ms, 0, 1};
  r.host = Timing{sample->host_ms, 0, 1};
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<AlgoResult>> GraphCandidates(
    const ConvOpGraph& graph, GraphLauncher& launcher, cudaStream_t stream,
    DeviceSpan workspace, const CudnnFinderOptions& options,
    const SearchOptions& search, SearchPhases* phases) {
  const auto h0 = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::vector<EngineConfig> configs,
                   graph.Configs(options.graph_heuristic_modes));
  SearchPhases unused;
  if (phases == nullptr) phases = &unused;
  phases->heuristics_ms = std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - h0)
                              .count();
  ASSIGN_OR_RETURN(CudaEvent start, CudaEvent::Create());
  ASSIGN_OR_RETURN(CudaEvent stop, CudaEvent::Create());
  const std::set<int> first_choices =
      FirstChoiceRanks(graph.problem(), configs, search.first_choices);
  std::vector<AlgoResult> results;
  std::chrono::steady_clock::duration compiled{};
  for (EngineConfig& config : configs) {
    AlgoResult r = ResultOf(config);
    if (!GraphPolicyAllows(graph.problem(), config.numerical_notes)) continue;
    if (!Retimes(search, r) && first_choices.count(r.heuristic_rank) == 0) {
      continue;
    }
    ASSIGN_OR_RETURN(
        std::optional<BackendDescriptor> plan,
        PlanFor(graph, config, options, search, phases, &compiled, r));
    if (plan.has_value()) {
      RETURN_IF_ERROR(TimeConfig(*std::move(plan), launcher, stream,
                                 workspace, start, stop, r));
    }
    results.push_back(std::move(r));
  }
  if (results.empty()) {
    AlgoResult none;
    none.status = AlgoStatus::kNotSupported;
    none.error = "cuDNN offers no engine config for this graph";
    results.push_back(std::move(none));
  }
  SortResults(results);
  return results;
}

absl::Status KeepPlans(const GraphLauncher& launcher,
                       const CudnnFinderOptions& options,
                       std::vector<AlgoResult>& results) {
  if (results.empty() || results[0].status != AlgoStatus::kOk) {
    return absl::OkStatus();
  }
  auto keep = [&](AlgoResult& r) -> absl::Status {
    cudnnBackendDescriptor_t plan = launcher.PlanOf(r);
    if (plan == nullptr || !r.plan.empty()) return absl::OkStatus();
    ASSIGN_OR_RETURN(r.plan, SerializePlan(plan));
    // A plan no one may load is not kept (plan_blob.h).
    if (!CheckLoadable(r.plan).ok()) r.plan.clear();
    return absl::OkStatus();
  };
  const double lead = results[0].cost(LaunchMode::kDirect).median_ms;
  int kept = 0;
  for (AlgoResult& r : results) {
    if (kept >= options.graph_plans_kept || r.status != AlgoStatus::kOk) break;
    const double cost = r.cost(LaunchMode::kDirect).median_ms;
    if (kept > 0 && cost > lead * (1 + options.graph_plan_margin)) break;
    if (launcher.PlanOf(r) == nullptr) continue;
    RETURN_IF_ERROR(keep(r));
    ++kept;
  }
  // Every runtime-compiled config that ran: whichever of them a program's
  // filter (caller_filters.h) and compile horizon lead to, it loads the plan
  // instead of compiling, and a later search of the key loads them all.
  for (AlgoResult& r : results) {
    if (r.status == AlgoStatus::kOk && RuntimeCompiled(r)) {
      RETURN_IF_ERROR(keep(r));
    }
  }
  return absl::OkStatus();
}

}  // namespace tunedb
