#include "server/tuning/revalidation.h"

#include <optional>

#include "common/caller_filters.h"
#include "common/config_identity.h"
#include "common/record_results.h"
#include "server/finder/finder.h"

namespace tunedb {
namespace {

// `r` as a config to re-time: what identifies it and what a caller's
// constraints read (notes, determinism), nothing measured.
AlgoResult ConfigOf(const AlgoResult& r) {
  AlgoResult c;
  c.algo = r.algo;
  c.math_type = r.math_type;
  c.knobs = r.knobs;
  c.numerical_notes = r.numerical_notes;
  c.behavior_notes = r.behavior_notes;
  c.deterministic = r.deterministic;
  return c;
}

double DirectMs(const AlgoResult& r) {
  return r.cost(LaunchMode::kDirect).median_ms;
}

}  // namespace

const Record* RevalidationSource(const ProblemKey& key, int from_cudnn,
                                 const std::vector<Record>& others) {
  const Record* best = nullptr;
  for (const Record& r : others) {
    DeviceKey device = r.key.device;
    if (device.cudnn_version != from_cudnn) continue;
    device.cudnn_version = key.device.cudnn_version;
    device.cuda_runtime_version = key.device.cuda_runtime_version;
    if (device != key.device || r.key.problem != key.problem) continue;
    if (best == nullptr || r.measured_at_us > best->measured_at_us) best = &r;
  }
  return best;
}

std::vector<AlgoResult> RevalidationCandidates(const Record& source) {
  std::vector<AlgoResult> out;
  auto add = [&out](const AlgoResult& r) {
    if (!ListsConfig(out, r)) out.push_back(ConfigOf(r));
  };
  int top = 0;
  for (const AlgoResult& r : source.results) {  // fastest first
    if (r.status != AlgoStatus::kOk || top >= kRevalidateTopK) break;
    add(r);
    ++top;
  }
  for (const CallerFilter& f : FrameworkFilters(source.key.problem.input_type)) {
    if (std::optional<AlgoResult> chosen = Choose(source, f.constraints)) {
      add(*chosen);
    }
  }
  return out;
}

RevalidationVerdict JudgeRevalidation(const Record& source,
                                      const std::vector<AlgoResult>& retimed) {
  using Outcome = RevalidationVerdict::Outcome;
  const std::vector<AlgoResult> candidates = RevalidationCandidates(source);
  const AlgoResult* best_old = nullptr;  // fastest re-timed candidate
  const AlgoResult* best_new = nullptr;  // fastest of cuDNN's new choices
  for (const AlgoResult& r : retimed) {
    if (r.status != AlgoStatus::kOk) continue;
    const AlgoResult*& best = ListsConfig(candidates, r) ? best_old : best_new;
    if (best == nullptr || DirectMs(r) < DirectMs(*best)) best = &r;
  }
  if (best_old == nullptr) {
    return {Outcome::kFullSearch,
            "none of the old record's candidates runs now"};
  }
  if (best_new != nullptr && DirectMs(*best_new) * (1 + kMinGainOverHeuristic) <
                                 DirectMs(*best_old)) {
    return {Outcome::kFullSearch,
            "a config the old record did not rank among its fastest now "
            "beats all of them by more than 2 %: its ranking no longer "
            "decides"};
  }
  const std::optional<AlgoResult> old_choice = Choose(source, Constraints());
  const AlgoResult* new_choice = ChooseFrom(retimed, Constraints());
  if (old_choice && new_choice != nullptr &&
      SameConfig(*old_choice, *new_choice)) {
    return {Outcome::kKept, ""};
  }
  return {Outcome::kChanged, ""};
}

}  // namespace tunedb
