// Interposer's graph half: see interposer.h.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/caller_filters.h"
#include "common/config_identity.h"
#include "cudnn/backend_graph.h"
#include "preload/graph_problem.h"
#include "preload/interposer.h"

namespace tunedb::preload {
namespace {

// A copy of the operation graph of heuristics descriptor `heuristics`, as
// the caller set it (its tensor ids); nullopt if cuDNN does not give one.
std::optional<BackendDescriptor> CopyQueryGraph(
    cudnnBackendDescriptor_t heuristics) {
  absl::StatusOr<BackendDescriptor> graph =
      CreateBackendDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  if (!graph.ok()) return std::nullopt;
  cudnnBackendDescriptor_t raw_graph = graph->get();
  int64_t got = 0;
  if (cudnnBackendGetAttribute(heuristics,
                               CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got,
                               &raw_graph) != CUDNN_STATUS_SUCCESS ||
      got != 1) {
    return std::nullopt;
  }
  return *std::move(graph);
}

}  // namespace

std::vector<TunedEngine> Interposer::CandidatesFor(const ProblemKey& key) {
  static constexpr ConfigSource kSources[] = {&Interposer::StoredConfigs};
  for (const ConfigSource source : kSources) {
    std::vector<TunedEngine> configs = (this->*source)(key);
    if (!configs.empty()) return configs;
  }
  return {};
}

std::vector<TunedEngine> Interposer::StoredConfigs(const ProblemKey& key) {
  std::vector<TunedEngine> out;
  // The fastest config under each filter PyTorch may apply
  // (caller_filters.h); without one for the first (no filter), a miss.
  for (const CallerFilter& filter : FrameworkFilters(key.problem.input_type)) {
    Constraints constraints = filter.constraints;
    constraints.compile_horizon_calls = options_.compile_horizon_calls;
    constraints.loads_stored_plans = options_.stored_plans;
    const EngineAnswer a = client_->GetEngine(key, constraints);
    if (!a.ok()) {
      if (out.empty()) return out;
      continue;
    }
    // A prediction answers, and its key is still to be tuned.
    if (a.source == Source::kPredicted) AppendMissKey(key);
    auto seen = std::find_if(out.begin(), out.end(), [&](const TunedEngine& t) {
      return SameAlgoAndKnobs(t.config, a.config);
    });
    if (seen == out.end()) {
      out.push_back({a.config, filter.alternative, filter.universal});
    } else {
      seen->universal = seen->universal || filter.universal;
    }
  }
  // The alternatives fastest first: whatever a caller's filter drops, the
  // first config it keeps is then the fastest it keeps (the one a lead-only
  // answer lets it build).
  std::stable_sort(out.begin(), out.end(),
                   [](const TunedEngine& a, const TunedEngine& b) {
                     if (a.alternative != b.alternative) return !a.alternative;
                     return a.config.cost(LaunchMode::kDirect).median_ms <
                            b.config.cost(LaunchMode::kDirect).median_ms;
                   });
  return out;
}

GraphAnswer Interposer::AnswerGraph(const GraphCall& call) {
  GraphQueryMemory& memory = GraphQueryMemory::ThisThread();
  if (call.shadow.mode == CUDNN_HEUR_MODE_FALLBACK) {
    try {
      return AnswerFallback(call, memory);
    } catch (...) {
      return GraphAnswer{};
    }
  }
  memory.fallback_counted = nullptr;
  GraphResult result;
  try {
    result = AnswerHeuristics(call, memory);
  } catch (...) {
    result.Pass(Outcome::kInternalError);
  }
  // A count query precedes the fill query of the same call: count once.
  if (call.requested > 0) RecordGraph(result);
  if (deterministic_misses() && options_.enabled && getpid() == pid_) {
    // Whatever the answer, its configs join the graph's one offer.
    result.answer.one_offer = true;
  }
  return result.answer;
}

GraphAnswer Interposer::AnswerFallback(const GraphCall& call,
                                       GraphQueryMemory& memory) {
  if (!options_.enabled || getpid() != pid_) return GraphAnswer{};
  if (!options_.empty_fallback || !call.shadow.graph_answered) {
    // Under a pin or a job, its configs join the graph's one offer.
    GraphAnswer pass;
    pass.one_offer = deterministic_misses();
    return pass;
  }
  *call.count = 0;
  if (memory.fallback_counted != call.heuristics) {
    memory.fallback_counted = call.heuristics;
    counters_.Count(Outcome::kFallbackEmpty);
    if (options_.log == LogLevel::kCalls) {
      std::fprintf(stderr, "tunedb preload: graph fallback_empty\n");
    }
  }
  return GraphAnswer{true, CUDNN_STATUS_SUCCESS, false, false, {}};
}

Interposer::GraphResult Interposer::AnswerHeuristics(const GraphCall& call,
                                                     GraphQueryMemory& memory) {
  GraphResult r;
  if (const std::optional<Outcome> why = Unavailable()) return r.Pass(*why);
  absl::StatusOr<ConvProblem> problem = ProblemFromShadow(call.shadow);
  if (!problem.ok()) return r.Pass(Outcome::kUnsupported);
  r.op = problem->op;
  const std::optional<ProblemKey> key = KeyOnDevice(*std::move(problem));
  if (!key.has_value()) return r.Pass(Outcome::kNoDevice);
  if (options_.log == LogLevel::kCalls) r.key_text = key->ToText();
  try {
    return AnswerKey(call, *key, memory, r);
  } catch (...) {
    // Out of memory: passed through, and logged with its pass and key.
    return r.Pass(Outcome::kInternalError);
  }
}

Interposer::GraphResult Interposer::AnswerKey(const GraphCall& call,
                                              const ProblemKey& key,
                                              GraphQueryMemory& memory,
                                              GraphResult r) {
  // The configs the count query just checked for this key, else a source's.
  std::optional<CheckedConfigs> checked =
      memory.TakeCounted(key, call.requested);
  std::vector<TunedEngine> candidates;
  if (!checked.has_value()) {
    candidates = CandidatesFor(key);
    if (candidates.empty()) return r.Pass(MissOutcome(key));
  }
  // The configs are finalized on a copy of the caller's graph, so they
  // carry its tensor ids.
  std::optional<BackendDescriptor> graph = CopyQueryGraph(call.heuristics);
  if (!graph.has_value()) return r.Pass(Outcome::kConfigFailed);
  if (!checked.has_value()) {
    checked =
        CheckOnGraph(key, candidates, graph->get(), options_.empty_fallback);
  }
  if (checked->empty()) return r.Pass(Outcome::kConfigFailed);
  if (call.requested == 0) {
    return CountAnswer(call, *std::move(checked), memory, std::move(r));
  }
  return FillAnswer(call, *checked, *std::move(graph), std::move(r));
}

Interposer::GraphResult Interposer::CountAnswer(const GraphCall& call,
                                                CheckedConfigs checked,
                                                GraphQueryMemory& memory,
                                                GraphResult r) {
  const std::vector<const AlgoResult*> offer =
      OfferOrder(checked, 0, options_.graph_configs);
  *call.count = static_cast<int64_t>(offer.size());
  r.outcome = Outcome::kHit;
  r.engine = offer[0]->algo;
  r.answer = GraphAnswer{true, CUDNN_STATUS_SUCCESS, false, false, {}};
  memory.counted = std::move(checked);
  return r;
}

Interposer::GraphResult Interposer::FillAnswer(const GraphCall& call,
                                               const CheckedConfigs& checked,
                                               BackendDescriptor graph,
                                               GraphResult r) {
  {
    absl::MutexLock lock(&kept_mu_);
    if (kept_graphs_.size() >= kMaxKeptGraphs) {
      return r.Pass(Outcome::kInternalError);
    }
  }
  // Every config was finalized on a scratch descriptor (CheckOnGraph)
  // before one of the caller's is touched.
  ConfigFill fill(call, graph.get());
  std::vector<const AlgoResult*> given;
  for (const AlgoResult* c :
       OfferOrder(checked, call.requested, options_.graph_configs)) {
    if (fill.done()) break;
    fill.Add(c->algo, c->knobs);
    if (fill.filled() > static_cast<int64_t>(given.size())) given.push_back(c);
  }
  const int64_t tunedb_given = fill.filled();
  if (tunedb_given == 0) return r.Pass(Outcome::kConfigFailed);
  // From here on the call is answered: its first descriptors are filled.
  try {
    // A caller that asks for more than tunedb offers gets cuDNN's own list
    // after it, without repeats.
    fill.AddCudnnOwn();
    // cuDNN may refer to the graph from the caller's configs and plans.
    absl::MutexLock lock(&kept_mu_);
    kept_graphs_.push_back(std::move(graph));
  } catch (...) {
    // Out of memory: the filled descriptors stand (the graph copy may leak).
    (void)graph.release();
  }
  *call.count = fill.filled();
  r.outcome = Outcome::kHit;
  r.engine = fill.given()[0].first;
  const bool gave_universal =
      checked.universal.has_value() && fill.Gave(*checked.universal);
  // Lead-only when every config given is tunedb's: cuDNN's own, after
  // them, are the caller's to build.
  r.answer = GraphAnswer{true, CUDNN_STATUS_SUCCESS, gave_universal,
                         gave_universal && options_.lead_plan_only &&
                             fill.filled() == tunedb_given,
                         {}};
  if (options_.stored_plans && !call.shadow.nodes.empty()) {
    // The call is answered already: a plan that cannot be given is built.
    std::vector<std::string> unusable;
    try {
      r.answer.plans = PlansForCaller(given, call.shadow.nodes[0], &unusable);
    } catch (...) {
      r.answer.plans.clear();
    }
    for (const std::string& why : unusable) {
      RecordPlan(PlanEvent::kStoredRefused, why);
    }
  }
  return r;
}

void Interposer::RecordPlan(PlanEvent event, absl::string_view why) {
  counters_.CountPlan(event);
  if (options_.log == LogLevel::kCalls) {
    const char* what = event == PlanEvent::kNotBuilt        ? "plan_not_built"
                       : event == PlanEvent::kStoredLoaded ? "stored_plan_loaded"
                       : event == PlanEvent::kStoredRefused
                           ? "stored_plan_refused"
                           : "stored_plan_failed_to_run";
    std::fprintf(stderr, "tunedb preload: graph %s%s%.*s\n", what,
                 why.empty() ? "" : ": ", static_cast<int>(why.size()),
                 why.data());
  }
}

void Interposer::RecordGraph(const GraphResult& r) {
  counters_.Count(r.outcome);
  if (options_.log != LogLevel::kCalls) return;
  std::string line = absl::StrCat("tunedb preload: graph ", ConvOpName(r.op),
                                  " ", OutcomeName(r.outcome));
  if (r.outcome == Outcome::kHit) absl::StrAppend(&line, " engine=", r.engine);
  if (!r.key_text.empty()) absl::StrAppend(&line, " ", r.key_text);
  std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace tunedb::preload
