#include "server/tuning/predictor.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/tuning/family_cache.h"
#include "server/tuning/stored_records.h"
#include "server/tuning/version_predictor.h"

namespace tunedb {

absl::StatusOr<Prediction> Predictor::Predict(const ValidKey& key,
                                              const Constraints& constraints,
                                              Predictors predictors) {
  // The same problem under another cuDNN version first (after an upgrade),
  // then the nearest shapes of this version.
  FamilyCache& families = records_->families();
  ASSIGN_OR_RETURN(const bool other_versions,
                   families.MayHoldOtherVersions(key.key()));
  if (other_versions) {
    ASSIGN_OR_RETURN(std::vector<Record> others,
                     records_->OtherVersions(key, /*with_plans=*/false));
    if (std::optional<Prediction> p =
            PredictFromOtherVersion(key.key(), others, constraints)) {
      predictions_.fetch_add(1, std::memory_order_relaxed);
      return *std::move(p);
    }
  }
  if (predictors == Predictors::kOtherVersions) {
    return absl::NotFoundError(
        absl::StrCat("no record for key ", key.HashText(),
                     " under this or another cuDNN version"));
  }
  ASSIGN_OR_RETURN(
      std::optional<Prediction> p,
      families.Predict(key.key(), constraints, options_.neighbours));
  if (!p) {
    return absl::NotFoundError(absl::StrCat(
        "no record for key ", key.HashText(),
        ", and no tuned problem of its family to predict from"));
  }
  if (p->distance > options_.max_distance) {
    return absl::NotFoundError(absl::StrCat(
        "no record for key ", key.HashText(), ", and its family's nearest "
        "tuned shape is ", absl::SixDigits(p->distance), " away (more than ",
        absl::SixDigits(options_.max_distance), " to predict from)"));
  }
  predictions_.fetch_add(1, std::memory_order_relaxed);
  return *std::move(p);
}

}  // namespace tunedb
