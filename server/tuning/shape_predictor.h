// An answer for a key never tuned, predicted from the tuned problems nearest
// to it: those of its family (every key field but the batch, the channels
// and the input size; a depthwise convolution's groups count as
// "depthwise", so depthwise layers of any width are one family), by the
// distance between their shapes (common/shape_family.h: both rules). The nearest `neighbours` vote, each for
// its own choice under the caller's constraints, weighted 1 / (1 + its
// distance); the config with the most weight leads the candidates, the
// others follow by weight.
//
// What a prediction is not: a measurement. Its timings and workspace are
// the neighbour's, for the neighbour's shape; a caller asks cuDNN for the
// workspace and falls to the next candidate, then to cuDNN's heuristic,
// where a candidate does not run.
//
// Thread safety: pure functions.
#ifndef TUNEDB_SERVER_TUNING_SHAPE_PREDICTOR_H_
#define TUNEDB_SERVER_TUNING_SHAPE_PREDICTOR_H_

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "common/prediction.h"
#include "common/shape_family.h"
#include "store/store.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

// A store filter that reads `key`'s family (and possibly more: the caller
// checks FamilyText).
RecordFilter FamilyFilter(const ProblemKey& key);

// One config's identity within a record: algo, math type and knobs.
using ConfigId = std::tuple<int, MathType, std::string>;
ConfigId ConfigIdOf(const AlgoResult& r);

// The prediction for `key` from `family` (records of its family; others,
// `key` itself and records with nothing that meets `constraints` are
// ignored), or nullopt when none can vote. Each neighbour votes for its
// choice under PredictionConstraints(constraints): what the caller would
// build, not load.
std::optional<Prediction> PredictFrom(
    const ProblemKey& key,
    const std::vector<std::shared_ptr<const Record>>& family,
    const Constraints& constraints, int neighbours);

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_SHAPE_PREDICTOR_H_
