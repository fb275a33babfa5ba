// An answer for a key never tuned under this cuDNN version, predicted from
// the same problem on the same GPU model tuned under another cuDNN version
// (docs/graph-api.md, "Keys never tuned"): after an upgrade, most choices
// survive, so the old choice is a better guess than a neighbour's shape.
// The nearest older version is preferred, else the nearest newer one.
//
// Like every prediction (common/prediction.h) it is not a measurement: its
// timings and workspace are the other version's, it carries no plan (a
// plan is made for one cuDNN), and a caller falls to the next candidate,
// then to cuDNN's heuristic, where a candidate does not run here.
//
// Thread safety: pure functions.
#ifndef TUNEDB_SERVER_TUNING_VERSION_PREDICTOR_H_
#define TUNEDB_SERVER_TUNING_VERSION_PREDICTOR_H_

#include <optional>
#include <vector>

#include "common/prediction.h"
#include "store/store.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

// A store filter that reads `key`'s problem on `key`'s GPU model under
// every cuDNN and CUDA runtime version.
RecordFilter OtherVersionsFilter(const ProblemKey& key);

// The prediction for `key` from `others` (records the filter read; `key`
// itself, records of another GPU or problem and unsupported ones are
// ignored) under PredictionConstraints(constraints), or nullopt when none
// has an answer. Its candidates are the chosen record's configs that meet
// `constraints`, its choice first, then fastest first; its source is that
// record's key; its confidence is the old choice's margin m over its
// runner-up (cost ratio minus 1) as m / (m + 0.05): 0 for a tie, 0.5 for a
// 5 % lead (m = 1 without a runner-up).
std::optional<Prediction> PredictFromOtherVersion(
    const ProblemKey& key, const std::vector<Record>& others,
    const Constraints& constraints);

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_VERSION_PREDICTOR_H_
