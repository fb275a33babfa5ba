// The steps of the graph half's answer (interposer.h) after the key, as
// values and functions the Interposer runs in order:
//
//   candidates (TunedEngine, from a source: the stored record today)
//     -> CheckOnGraph: those that finalize on a copy of the caller's graph
//        (CheckedConfigs)
//     -> OfferOrder: the order the caller gets them in
//     -> ConfigFill: the caller's own engine-config descriptors filled
//     -> PlansForCaller: their stored plans, for the caller's tensor ids.
//
// A source of configs (the stored record is one) only has to give
// TunedEngines; the steps after it do not depend on where they came from.
// GraphQueryMemory is what one thread carries from one heuristics query to
// the next.
//
// Thread safety: plain values and functions of their arguments, except
// GraphQueryMemory, which is per thread.
#ifndef TUNEDB_PRELOAD_GRAPH_OFFER_H_
#define TUNEDB_PRELOAD_GRAPH_OFFER_H_

#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "preload/graph_call.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb::preload {

// One config a source offers for a key. `alternative`: there for a
// caller's stricter filter only (deterministic, TF32 off, no workspace), not
// one of the choices; `universal`: one every filter keeps, with no
// workspace.
struct TunedEngine {
  AlgoResult config;
  bool alternative = false;
  bool universal = false;
};

// The candidates for `key` that finalized on the caller's graph, split as
// the offer needs them. `universal` is set only when the answer may empty the
// graph's fallback list (PreloadOptions::empty_fallback).
struct CheckedConfigs {
  ProblemKey key;
  std::vector<AlgoResult> choices, alternatives;
  std::optional<AlgoResult> universal;
  bool empty() const { return choices.empty() && alternatives.empty(); }
};

// Finalizes each of `candidates` (in order) on a scratch engine config of
// the finalized operation graph `graph`, and keeps those that finalize.
CheckedConfigs CheckOnGraph(const ProblemKey& key,
                            const std::vector<TunedEngine>& candidates,
                            cudnnBackendDescriptor_t graph,
                            bool empty_fallback);

// The configs of `c` in the order a query asking for `requested` gets them
// (0: a count query): the choices, then the alternatives. Without a
// universal config the last choice is repeated, so that a caller that
// builds and times configs up to a limit (PyTorch's benchmark_limit) reaches
// it before cuDNN's fallback list: up to `graph_configs` entries before the
// alternatives, or, for a caller asking for fewer than that list, after
// them up to `requested` (so it gets the distinct configs first).
std::vector<const AlgoResult*> OfferOrder(const CheckedConfigs& c,
                                          int64_t requested, int graph_configs);

// A fill query's new engine-config descriptors (GraphCall::elements),
// filled in order, each finalized as one config on `graph`. The first that
// cannot be filled ends the fill: a half-set descriptor is not reused.
class ConfigFill {
 public:
  ConfigFill(const GraphCall& call, cudnnBackendDescriptor_t graph);

  // No descriptor left, or one failed.
  bool done() const { return filled() == requested_ || failed_; }
  // Fills the next descriptor (not when done()).
  void Add(int engine, const std::vector<Knob>& knobs);
  // After tunedb's configs, while descriptors are left: cuDNN's own list
  // for the query's heuristics descriptor, without the configs already
  // given and those that do not finalize on the graph.
  void AddCudnnOwn();

  int64_t filled() const { return static_cast<int64_t>(given_.size()); }
  // The configs given, in order (engine, knobs).
  const std::vector<std::pair<int, std::vector<Knob>>>& given() const {
    return given_;
  }
  bool Gave(const AlgoResult& config) const;

 private:
  bool Gave(int engine, const std::vector<Knob>& knobs) const;

  cudnnBackendDescriptor_t heuristics_;
  cudnnBackendDescriptor_t* out_;
  int64_t requested_;
  cudnnBackendDescriptor_t graph_;
  bool failed_ = false;
  std::vector<std::pair<int, std::vector<Knob>>> given_;
};

// The stored plans of `given` (the configs filled, in order) whose engines
// compile at run time, renumbered from tunedb's tensor ids to those of the
// caller's convolution `node` (GraphAnswer::plans): null where a config has
// none, is precompiled, or its plan does not fit the caller's graph: other
// tensor ids, or other dims or strides (a strided view such as a channel
// slice). Each reason is appended to *unusable.
// Empty when none has a plan. One plan renumbered once, however often it
// is given.
std::vector<std::shared_ptr<const std::string>> PlansForCaller(
    const std::vector<const AlgoResult*>& given, const ShadowNode& node,
    std::vector<std::string>* unusable);

// What the calling thread's heuristics queries carry to the next one.
// cudnn_frontend reads a list with a count query and then a fill query
// (getEngineConfigCount, getEngineConfig) in a row on one thread.
struct GraphQueryMemory {
  // The configs the last count query checked: the fill query right after
  // it reuses them, so each config is finalized once on the caller's
  // descriptors instead of on a scratch one first again.
  std::optional<CheckedConfigs> counted;
  // The fallback-list descriptor last answered empty: its count and fill
  // queries count once.
  cudnnBackendDescriptor_t fallback_counted = nullptr;

  // The calling thread's memory.
  static GraphQueryMemory& ThisThread();

  // The configs counted for `key`, for a fill query (`requested` > 0);
  // whatever was counted is forgotten either way.
  std::optional<CheckedConfigs> TakeCounted(const ProblemKey& key,
                                            int64_t requested);
};

}  // namespace tunedb::preload

#endif  // TUNEDB_PRELOAD_GRAPH_OFFER_H_
