// Predictor: an answer for a key with no record, predicted from the same
// problem tuned under another cuDNN version of its GPU model
// (version_predictor.h), else from the nearest tuned problems of its family
// (shape_predictor.h, FamilyCache), where the nearest is near enough.
//
// Thread safety: thread-safe.
#ifndef TUNEDB_SERVER_TUNING_PREDICTOR_H_
#define TUNEDB_SERVER_TUNING_PREDICTOR_H_

#include <atomic>
#include <cstdint>

#include "absl/status/statusor.h"
#include "common/prediction.h"
#include "common/valid_key.h"
#include "tunedb/record.h"

namespace tunedb {

class StoredRecords;

// Which predictors a prediction may answer from.
enum class Predictors {
  // The same problem under another cuDNN version of the GPU model only (an
  // upgrade not yet revalidated).
  kOtherVersions,
  // That, else the nearest tuned problems of the key's family.
  kAll,
};

class Predictor {
 public:
  struct Options {
    // How many nearest tuned problems vote.
    int neighbours = 3;
    // The nearest tuned problem must be at most this far (ShapeDistance).
    double max_distance = 1.0;
  };
  // `records` must outlive this.
  Predictor(const Options& options, StoredRecords* records)
      : options_(options), records_(records) {}

  // A prediction for `key` under `constraints`; NOT_FOUND when no predictor
  // `predictors` allows has an answer. Counted in predictions().
  absl::StatusOr<Prediction> Predict(const ValidKey& key,
                                     const Constraints& constraints,
                                     Predictors predictors);

  int64_t predictions() const { return predictions_.load(); }

 private:
  const Options options_;
  StoredRecords* const records_;
  std::atomic<int64_t> predictions_{0};
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_PREDICTOR_H_
