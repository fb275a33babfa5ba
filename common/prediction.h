// A predicted answer for a key never tuned (server/tuning/shape_predictor.h
// makes it; the Lookup RPC carries it): candidates from the nearest tuned
// problems of the key's family, and how they were chosen.
//
// Thread safety: a plain value.
#ifndef TUNEDB_COMMON_PREDICTION_H_
#define TUNEDB_COMMON_PREDICTION_H_

#include <string>
#include <vector>

#include "tunedb/record.h"

namespace tunedb {

struct Prediction {
  // Distinct configs (algo, math type, knobs), the predicted one first;
  // their timings and workspace are the neighbours' (other shapes), and
  // they carry no plan (a plan is made for one shape).
  std::vector<AlgoResult> candidates;
  // The key texts of the stored problems that voted for candidates[0],
  // nearest first.
  std::vector<std::string> sources;
  // The winner's share of the votes' weight times 1 / (1 + the distance of
  // its nearest voter): 1 only for a unanimous vote of identical shapes.
  double confidence = 0;
  // The distance (ShapeDistance) of the nearest stored shape that voted:
  // one with nothing that meets the caller's constraints does not count.
  double distance = 0;
};

// The constraints a prediction's candidates are chosen under: the caller's,
// but built rather than loaded. A candidate carries no plan (a stored plan
// is made for one shape and one cuDNN), so a runtime-compiled config that
// won a neighbour because its plan loaded must pay its build time here.
inline Constraints PredictionConstraints(Constraints caller) {
  caller.loads_stored_plans = false;
  return caller;
}

}  // namespace tunedb

#endif  // TUNEDB_COMMON_PREDICTION_H_
