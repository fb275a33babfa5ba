#include "server/tuning/family_cache.h"

#include <algorithm>
#include <utility>

#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "server/tuning/shape_predictor.h"

namespace tunedb {

absl::StatusOr<std::shared_ptr<const FamilyCache::Records>> FamilyCache::Family(
    const ProblemKey& key) {
  const std::string family = FamilyText(key);
  {
    absl::MutexLock lock(&mu_);
    auto it = families_.find(family);
    if (it != families_.end() && absl::Now() - it->second.loaded < ttl_) {
      return it->second.records;
    }
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const Records> records, Read(key));
  absl::MutexLock lock(&mu_);
  families_[family] = Entry{absl::Now(), records};
  return records;
}

absl::StatusOr<std::shared_ptr<const FamilyCache::Records>> FamilyCache::Read(
    const ProblemKey& key) {
  auto records = std::make_shared<Records>();
  RecordFilter filter = FamilyFilter(key);
  filter.without_plans = true;
  RETURN_IF_ERROR(store_->Query(
      filter, 0, 0,
      [&](const Record& r) {
        if (!SameFamily(key, r.key)) return true;
        records->push_back(std::make_shared<Record>(r));
        return static_cast<int>(records->size()) < max_records_;
      },
      [](const BadRow&) { return true; }));
  return std::shared_ptr<const Records>(std::move(records));
}

absl::StatusOr<bool> FamilyCache::MayHoldOtherVersions(
    const ProblemKey& key) {
  std::vector<int> versions;
  bool fresh = false;
  {
    absl::MutexLock lock(&mu_);
    fresh = absl::Now() - versions_loaded_ < ttl_;
    if (fresh) versions = versions_;
  }
  if (!fresh) {
    ASSIGN_OR_RETURN(versions, store_->CudnnVersions());
    absl::MutexLock lock(&mu_);
    versions_ = versions;
    versions_loaded_ = absl::Now();
  }
  return std::any_of(versions.begin(), versions.end(), [&](int v) {
    return v != key.device.cudnn_version;
  });
}

void FamilyCache::Forget(const ProblemKey& key) {
  const std::string family = FamilyText(key);
  absl::MutexLock lock(&mu_);
  families_.erase(family);
  versions_loaded_ = absl::InfinitePast();
}

void FamilyCache::Clear() {
  absl::MutexLock lock(&mu_);
  families_.clear();
  versions_loaded_ = absl::InfinitePast();
}

}  // namespace tunedb
