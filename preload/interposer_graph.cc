// Interposer's graph half: see interposer.h.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/math_policy.h"
#include "cudnn/backend_graph.h"
#include "preload/graph_problem.h"
#include "preload/interposer.h"

namespace tunedb::preload {
namespace {

bool SameConfig(const AlgoResult& a, int engine, const std::vector<Knob>& k) {
  return a.algo == engine && a.knobs == k;
}

// The fallback-list descriptor this thread last counted: cudnn_frontend
// reads an empty list with a count query and a fill query in a row.
thread_local cudnnBackendDescriptor_t last_counted_fallback = nullptr;

// The configs of tunedb's answer for `key` that finalized on the caller's
// graph, split as the offer needs them (interposer.h).
struct CheckedConfigs {
  ProblemKey key;
  std::vector<AlgoResult> choices, alternatives;
  std::optional<AlgoResult> universal;
};
// What this thread's last count query checked: cudnn_frontend makes the
// fill query right after it (getEngineConfigCount, getEngineConfig), which
// then finalizes each config once, on the caller's descriptors, instead of
// on a scratch one first again (each finalize costs 0.1-0.4 ms on an H200).
thread_local std::optional<CheckedConfigs> last_counted;

}  // namespace

std::vector<Interposer::TunedEngine> Interposer::TunedEngines(
    const ProblemKey& key) {
  std::vector<TunedEngine> out;
  const EngineAnswer fastest = client_->GetEngine(key, {});
  if (!fastest.ok()) return out;
  out.push_back({fastest.config, false});
  // Each filter PyTorch may apply (interposer.h), as constraints: it always
  // drops DOWN_CONVERT_INPUTS; deterministic mode drops nondeterministic
  // configs; with TF32 off, fp32 drops tensor-core ones.
  const bool fp32 = IsTf32Type(key.problem.input_type);
  Constraints no_down_convert;
  no_down_convert.excluded_numerical_notes =
      NoteBit(kNumericalNoteDownConvertInputs);
  Constraints deterministic = no_down_convert;
  deterministic.deterministic_only = true;
  deterministic.excluded_numerical_notes |=
      NoteBit(kNumericalNoteNondeterministic);
  Constraints no_tf32 = no_down_convert;
  no_tf32.excluded_numerical_notes |= NoteBit(kNumericalNoteTensorCore);
  Constraints safe = deterministic;  // every filter at once
  if (fp32) safe.excluded_numerical_notes |= NoteBit(kNumericalNoteTensorCore);
  Constraints safe_no_workspace = safe;
  safe_no_workspace.max_workspace_bytes = 0;
  struct Ask {
    Constraints constraints;
    bool alternative, universal;
  };
  std::vector<Ask> asks = {{no_down_convert, false, false},
                           {deterministic, true, false}};
  if (fp32) asks.push_back({no_tf32, true, false});
  asks.push_back({safe, true, false});
  asks.push_back({safe_no_workspace, true, true});
  for (const Ask& ask : asks) {
    const EngineAnswer a = client_->GetEngine(key, ask.constraints);
    if (!a.ok()) continue;
    auto seen = std::find_if(out.begin(), out.end(), [&](const TunedEngine& t) {
      return SameConfig(t.config, a.config.algo, a.config.knobs);
    });
    if (seen == out.end()) {
      out.push_back({a.config, ask.alternative, ask.universal});
    } else {
      seen->universal = seen->universal || ask.universal;
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

GraphAnswer Interposer::AnswerFallback(const GraphCall& call) {
  if (!options_.enabled || !options_.empty_fallback ||
      !call.shadow.graph_answered || getpid() != pid_) {
    return GraphAnswer{};
  }
  *call.count = 0;
  if (last_counted_fallback != call.heuristics) {
    last_counted_fallback = call.heuristics;
    counters_.Count(Outcome::kFallbackEmpty);
    if (options_.log == LogLevel::kCalls) {
      std::fprintf(stderr, "tunedb preload: graph fallback_empty\n");
    }
  }
  return GraphAnswer{true, CUDNN_STATUS_SUCCESS};
}

GraphAnswer Interposer::AnswerGraph(const GraphCall& call) {
  if (call.shadow.mode == CUDNN_HEUR_MODE_FALLBACK) {
    try {
      return AnswerFallback(call);
    } catch (...) {
      return GraphAnswer{};
    }
  }
  last_counted_fallback = nullptr;
  ConvOp op = ConvOp::kForward;
  std::string key_text;
  Outcome outcome = Outcome::kInternalError;
  int engine = -1;
  GraphAnswer answer;
  try {
    answer = AnswerGraphOrThrow(call, &op, &key_text, &outcome, &engine);
  } catch (...) {
    answer = GraphAnswer{};
    outcome = Outcome::kInternalError;
  }
  // A count query precedes the fill query of the same call: count once.
  if (call.requested > 0) RecordGraph(op, outcome, engine, key_text);
  return answer;
}

GraphAnswer Interposer::AnswerGraphOrThrow(const GraphCall& call, ConvOp* op,
                                           std::string* key_text,
                                           Outcome* outcome, int* engine) {
  const GraphAnswer pass;
  *outcome = Outcome::kDisabled;
  if (!options_.enabled) return pass;
  *outcome = Outcome::kCudnnVersion;
  if (cudnn_version_ / 10000 != CUDNN_MAJOR) return pass;
  *outcome = Outcome::kInternalError;
  if (client_ == nullptr) return pass;
  *outcome = Outcome::kForked;
  if (getpid() != pid_) return pass;

  ProblemKey key;
  absl::StatusOr<ConvProblem> problem = ProblemFromShadow(call.shadow);
  *outcome = Outcome::kUnsupported;
  if (!problem.ok()) return pass;
  key.problem = *std::move(problem);
  *op = key.problem.op;
  absl::StatusOr<DeviceKey> device = device_->Get();
  *outcome = Outcome::kNoDevice;
  if (!device.ok()) return pass;
  key.device = *std::move(device);
  if (options_.log == LogLevel::kCalls) *key_text = key.ToText();

  // The configs the count query just checked for this key, else tunedb's.
  std::optional<CheckedConfigs> counted = std::move(last_counted);
  last_counted.reset();
  if (call.requested == 0 || !counted.has_value() || !(counted->key == key)) {
    counted.reset();
  }
  std::vector<TunedEngine> tuned;
  if (!counted.has_value()) {
    tuned = TunedEngines(key);
    if (tuned.empty()) {
      const bool reachable = client_->DaemonReachable();
      if (reachable) NoteMiss(key);
      *outcome = reachable ? Outcome::kMiss : Outcome::kDaemonDown;
      return pass;
    }
  }

  // The caller's graph, copied out of its heuristics descriptor: the
  // engines are finalized on it, so they carry its tensor ids.
  *outcome = Outcome::kConfigFailed;
  absl::StatusOr<BackendDescriptor> graph =
      CreateBackendDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  if (!graph.ok()) return pass;
  cudnnBackendDescriptor_t raw_graph = graph->get();
  int64_t got = 0;
  if (cudnnBackendGetAttribute(call.heuristics,
                               CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got,
                               &raw_graph) != CUDNN_STATUS_SUCCESS ||
      got != 1) {
    return pass;
  }
  // The offer: the choices that finalize on this graph, then the
  // alternatives. A caller that builds and times every config of its
  // heuristics and fallback lists up to a limit (PyTorch's benchmark mode:
  // its benchmark_limit, 10) so times tunedb's configs only: when the offer
  // holds a universal config (one every filter keeps, with no workspace),
  // the same graph's fallback list is answered empty (AnswerFallback);
  // without one, the fallback list is cuDNN's (generic engines, often much
  // slower) and the last choice is repeated to options_.graph_configs
  // entries, so the limit is reached before it. A caller that asks for
  // fewer than that (without a count query) gets the distinct configs
  // first.
  if (!counted.has_value()) {
    counted.emplace();
    counted->key = key;
    for (const TunedEngine& t : tuned) {
      if (!EngineConfigFor(raw_graph, t.config.algo, t.config.knobs).ok()) {
        continue;
      }
      (t.alternative ? counted->alternatives : counted->choices)
          .push_back(t.config);
      if (t.universal && options_.empty_fallback) {
        counted->universal = t.config;
      }
    }
  }
  if (counted->choices.empty() && counted->alternatives.empty()) return pass;
  std::vector<const AlgoResult*> choices, alternatives;
  for (const AlgoResult& r : counted->choices) choices.push_back(&r);
  for (const AlgoResult& r : counted->alternatives) alternatives.push_back(&r);
  const AlgoResult* universal =
      counted->universal.has_value() ? &*counted->universal : nullptr;
  std::vector<const AlgoResult*> offer = choices;
  while (universal == nullptr && !choices.empty() &&
         offer.size() < static_cast<size_t>(options_.graph_configs)) {
    offer.push_back(choices.back());
  }
  offer.insert(offer.end(), alternatives.begin(), alternatives.end());

  if (call.requested == 0) {
    *call.count = static_cast<int64_t>(offer.size());
    *outcome = Outcome::kHit;
    *engine = offer[0]->algo;
    last_counted = *std::move(counted);
    return GraphAnswer{true, CUDNN_STATUS_SUCCESS};
  }
  if (call.requested < static_cast<int64_t>(offer.size())) {
    offer = choices;
    offer.insert(offer.end(), alternatives.begin(), alternatives.end());
    while (universal == nullptr && !choices.empty() &&
           static_cast<int64_t>(offer.size()) < call.requested) {
      offer.push_back(choices.back());
    }
  }
  *outcome = Outcome::kInternalError;
  {
    std::lock_guard<std::mutex> lock(kept_mu_);
    if (kept_graphs_.size() >= kMaxKeptGraphs) return pass;
  }

  // Every config is finalized on a scratch descriptor above or below before
  // one of the caller's is touched, and the first caller descriptor that
  // cannot be filled ends the answer (a half-set descriptor is not reused).
  auto* out = static_cast<cudnnBackendDescriptor_t*>(call.elements);
  int64_t filled = 0;
  bool failed = false;
  std::vector<std::pair<int, std::vector<Knob>>> given;
  auto fill = [&](int engine_id, const std::vector<Knob>& knobs) {
    if (FillEngineConfig(out[filled], raw_graph, engine_id, knobs).ok()) {
      given.emplace_back(engine_id, knobs);
      ++filled;
    } else {
      failed = true;
    }
  };
  for (const AlgoResult* r : offer) {
    if (filled == call.requested || failed) break;
    fill(r->algo, r->knobs);
  }
  const size_t tunedb_given = given.size();  // then cuDNN's own, if any
  *outcome = Outcome::kConfigFailed;
  if (filled == 0) return pass;
  // From here on the call is answered: its first descriptors are filled.
  try {
    if (filled < call.requested && !failed) {
      // A caller that asks for more than tunedb offers gets cuDNN's own
      // list after it, without repeats.
      absl::StatusOr<std::vector<EngineConfig>> own =
          HeuristicResults(call.heuristics);
      if (own.ok()) {
        for (const EngineConfig& c : *own) {
          if (filled == call.requested || failed) break;
          const bool seen =
              std::any_of(given.begin(), given.end(), [&](const auto& g) {
                return g.first == c.engine && g.second == c.knobs;
              });
          if (seen || !EngineConfigFor(raw_graph, c.engine, c.knobs).ok()) {
            continue;
          }
          fill(c.engine, c.knobs);
        }
      }
    }
    // cuDNN may refer to the graph from the caller's configs and plans.
    std::lock_guard<std::mutex> lock(kept_mu_);
    kept_graphs_.push_back(*std::move(graph));
  } catch (...) {
    // Out of memory: the filled descriptors stand (the graph copy may leak).
    (void)graph->release();
  }
  *call.count = filled;
  *outcome = Outcome::kHit;
  *engine = given[0].first;
  const bool gave_universal =
      universal != nullptr &&
      std::any_of(given.begin(), given.end(), [&](const auto& g) {
        return SameConfig(*universal, g.first, g.second);
      });
  // Lead-only when every config given is tunedb's: cuDNN's own, after
  // them, are the caller's to build.
  return GraphAnswer{true, CUDNN_STATUS_SUCCESS, gave_universal,
                     gave_universal && options_.lead_plan_only &&
                         given.size() == tunedb_given};
}

void Interposer::NotePlanNotBuilt() {
  counters_.CountPlanNotBuilt();
  if (options_.log == LogLevel::kCalls) {
    std::fprintf(stderr, "tunedb preload: graph plan_not_built\n");
  }
}

void Interposer::RecordGraph(ConvOp op, Outcome outcome, int engine,
                             const std::string& key_text) {
  counters_.Count(outcome);
  if (options_.log != LogLevel::kCalls) return;
  std::string line = absl::StrCat("tunedb preload: graph ", ConvOpName(op), " ",
                                  OutcomeName(outcome));
  if (outcome == Outcome::kHit) absl::StrAppend(&line, " engine=", engine);
  if (!key_text.empty()) absl::StrAppend(&line, " ", key_text);
  std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace tunedb::preload
