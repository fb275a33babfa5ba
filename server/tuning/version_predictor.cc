#include "server/tuning/version_predictor.h"

#include <algorithm>
#include <string>

#include "common/config_identity.h"
#include "common/record_results.h"

namespace tunedb {
namespace {

// `other`'s key is `key`'s but for its cuDNN and CUDA runtime versions.
bool OtherVersionOf(const ProblemKey& key, const ProblemKey& other) {
  DeviceKey device = other.device;
  device.cudnn_version = key.device.cudnn_version;
  device.cuda_runtime_version = key.device.cuda_runtime_version;
  return device == key.device && other.problem == key.problem &&
         other.device.cudnn_version != key.device.cudnn_version;
}

// The record to predict from: the nearest older cuDNN version, else the
// nearest newer one.
const Record* Nearest(const ProblemKey& key, const std::vector<Record>& others,
                      const Constraints& constraints) {
  const Record* older = nullptr;
  const Record* newer = nullptr;
  for (const Record& r : others) {
    if (!OtherVersionOf(key, r.key) || !Choose(r, constraints)) continue;
    const int v = r.key.device.cudnn_version;
    if (v < key.device.cudnn_version) {
      if (older == nullptr || v > older->key.device.cudnn_version) older = &r;
    } else if (newer == nullptr || v < newer->key.device.cudnn_version) {
      newer = &r;
    }
  }
  return older != nullptr ? older : newer;
}

}  // namespace

RecordFilter OtherVersionsFilter(const ProblemKey& key) {
  return RecordFilter::OfKeyFieldsBut(key, [](const std::string& name) {
    return name == "cudnn" || name == "cuda";
  });
}

std::optional<Prediction> PredictFromOtherVersion(
    const ProblemKey& key, const std::vector<Record>& others,
    const Constraints& caller) {
  const Constraints constraints = PredictionConstraints(caller);
  const Record* from = Nearest(key, others, constraints);
  if (from == nullptr) return std::nullopt;
  const std::optional<AlgoResult> chosen = Choose(*from, constraints);
  Prediction p;
  p.candidates.push_back(*chosen);
  double runner_up = 0;
  for (const AlgoResult& r : from->results) {  // fastest first
    if (!Meets(r, constraints) || SameConfig(r, *chosen)) continue;
    if (runner_up == 0) runner_up = EffectiveCost(r, constraints);
    p.candidates.push_back(r);
  }
  for (AlgoResult& c : p.candidates) c.plan.clear();
  const double best = EffectiveCost(*chosen, constraints);
  const double margin =
      runner_up > 0 && best > 0 ? std::max(0.0, runner_up / best - 1) : 1.0;
  p.confidence = margin / (margin + 0.05);
  p.distance = 0;
  p.sources = {from->key.ToText()};
  return p;
}

}  // namespace tunedb
