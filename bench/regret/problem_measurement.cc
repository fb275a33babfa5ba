#include "bench/regret/problem_measurement.h"

namespace tunedb::regret {

absl::string_view PickKindName(PickKind kind) {
  switch (kind) {
    case PickKind::kTunedb:
      return "tunedb";
    case PickKind::kFind:
      return "cudnnFind";
    case PickKind::kHeuristic:
      return "heuristic";
  }
  return "?";
}

const TimedCandidate* FindCandidate(const ProblemMeasurement& m, int algo,
                                    MathType math) {
  for (const TimedCandidate& c : m.candidates) {
    if (c.algo == algo && c.math == math) return &c;
  }
  return nullptr;
}

const TimedCandidate* BestCandidate(const ProblemMeasurement& m) {
  const TimedCandidate* best = nullptr;
  for (const TimedCandidate& c : m.candidates) {
    if (!c.timed()) continue;
    if (best == nullptr || c.median_ms < best->median_ms) best = &c;
  }
  return best;
}

std::optional<double> PickRatio(const ProblemMeasurement& m, PickKind kind) {
  const Pick& pick = m.pick(kind);
  const TimedCandidate* best = BestCandidate(m);
  if (!pick.found || best == nullptr || best->median_ms <= 0) {
    return std::nullopt;
  }
  const TimedCandidate* c = FindCandidate(m, pick.algo, pick.math);
  if (c == nullptr || !c->timed()) return std::nullopt;
  return c->median_ms / best->median_ms;
}

}  // namespace tunedb::regret
