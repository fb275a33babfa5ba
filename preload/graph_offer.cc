#include "preload/graph_offer.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "common/record_results.h"
#include "cudnn/backend_graph.h"
#include "cudnn/plan_blob.h"

namespace tunedb::preload {
namespace {

// `offer` with `c`'s last choice appended until it holds `n` entries, when
// `c` has no universal config.
void RepeatLastChoice(const CheckedConfigs& c, size_t n,
                      std::vector<const AlgoResult*>* offer) {
  while (!c.universal.has_value() && !c.choices.empty() && offer->size() < n) {
    offer->push_back(&c.choices.back());
  }
}

void Append(const std::vector<AlgoResult>& configs,
            std::vector<const AlgoResult*>* offer) {
  for (const AlgoResult& r : configs) offer->push_back(&r);
}

}  // namespace

CheckedConfigs CheckOnGraph(const ProblemKey& key,
                            const std::vector<TunedEngine>& candidates,
                            cudnnBackendDescriptor_t graph,
                            bool empty_fallback) {
  CheckedConfigs checked;
  checked.key = key;
  for (const TunedEngine& t : candidates) {
    if (!EngineConfigFor(graph, t.config.algo, t.config.knobs).ok()) continue;
    (t.alternative ? checked.alternatives : checked.choices)
        .push_back(t.config);
    if (t.universal && empty_fallback) checked.universal = t.config;
  }
  return checked;
}

std::vector<const AlgoResult*> OfferOrder(const CheckedConfigs& c,
                                          int64_t requested,
                                          int graph_configs) {
  std::vector<const AlgoResult*> offer;
  Append(c.choices, &offer);
  RepeatLastChoice(c, static_cast<size_t>(graph_configs), &offer);
  Append(c.alternatives, &offer);
  if (requested == 0 || requested >= static_cast<int64_t>(offer.size())) {
    return offer;
  }
  offer.clear();
  Append(c.choices, &offer);
  Append(c.alternatives, &offer);
  RepeatLastChoice(c, static_cast<size_t>(requested), &offer);
  return offer;
}

ConfigFill::ConfigFill(const GraphCall& call, cudnnBackendDescriptor_t graph)
    : heuristics_(call.heuristics),
      out_(static_cast<cudnnBackendDescriptor_t*>(call.elements)),
      requested_(call.requested),
      graph_(graph) {}

void ConfigFill::Add(int engine, const std::vector<Knob>& knobs) {
  if (FillEngineConfig(out_[filled()], graph_, engine, knobs).ok()) {
    given_.emplace_back(engine, knobs);
  } else {
    failed_ = true;
  }
}

void ConfigFill::AddCudnnOwn() {
  if (done()) return;
  absl::StatusOr<std::vector<EngineConfig>> own = HeuristicResults(heuristics_);
  if (!own.ok()) return;
  for (const EngineConfig& c : *own) {
    if (done()) break;
    if (Gave(c.engine, c.knobs) ||
        !EngineConfigFor(graph_, c.engine, c.knobs).ok()) {
      continue;
    }
    Add(c.engine, c.knobs);
  }
}

bool ConfigFill::Gave(const AlgoResult& config) const {
  return Gave(config.algo, config.knobs);
}

bool ConfigFill::Gave(int engine, const std::vector<Knob>& knobs) const {
  return std::any_of(given_.begin(), given_.end(), [&](const auto& g) {
    return g.first == engine && g.second == knobs;
  });
}

std::vector<std::shared_ptr<const std::string>> PlansForCaller(
    const std::vector<const AlgoResult*>& given, const ShadowNode& node,
    std::vector<std::string>* unusable) {
  std::vector<std::shared_ptr<const std::string>> out(given.size());
  // A precompiled engine's plan builds in well under a millisecond:
  // loading it (twice) would only cost.
  auto loadable = [](const AlgoResult* r) {
    return !r->plan.empty() && RuntimeCompiled(*r);
  };
  const TensorIds caller{node.x.uid, node.w.uid, node.y.uid};
  const TensorLayouts layouts{{node.x.dims, node.x.strides},
                              {node.w.dims, node.w.strides},
                              {node.y.dims, node.y.strides}};
  if (caller.x < 0 || caller.w < 0 || caller.y < 0) {
    if (std::any_of(given.begin(), given.end(), loadable)) {
      unusable->push_back("the caller's tensor ids are unknown");
    }
    out.clear();
    return out;
  }
  bool any = false;
  for (size_t i = 0; i < given.size(); ++i) {
    if (!loadable(given[i])) continue;
    const auto same = std::find(given.begin(), given.begin() + i, given[i]);
    if (same != given.begin() + i) {
      out[i] = out[same - given.begin()];
      continue;
    }
    const absl::Status loadable = CheckLoadable(given[i]->plan);
    absl::StatusOr<std::string> renumbered =
        loadable.ok() ? WithTensorIds(given[i]->plan,
                                      TensorIds{kUidX, kUidW, kUidY}, caller,
                                      &layouts)
                      : absl::StatusOr<std::string>(loadable);
    if (!renumbered.ok()) {
      unusable->push_back(std::string(renumbered.status().message()));
      continue;
    }
    out[i] = std::make_shared<const std::string>(*std::move(renumbered));
    any = true;
  }
  if (!any) out.clear();
  return out;
}

GraphQueryMemory& GraphQueryMemory::ThisThread() {
  static thread_local GraphQueryMemory memory;
  return memory;
}

std::optional<CheckedConfigs> GraphQueryMemory::TakeCounted(
    const ProblemKey& key, int64_t requested) {
  std::optional<CheckedConfigs> taken = std::move(counted);
  counted.reset();
  if (requested == 0 || !taken.has_value() || !(taken->key == key)) {
    return std::nullopt;
  }
  return taken;
}

}  // namespace tunedb::preload
