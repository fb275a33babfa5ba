#include "server/tuning/family_cache.h"

#include <algorithm>
#include <utility>

#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "server/tuning/shape_predictor.h"

namespace tunedb {
namespace {

// Adds `version` to the ascending `versions` unless it is there.
void AddVersion(int version, std::vector<int>& versions) {
  auto at = std::lower_bound(versions.begin(), versions.end(), version);
  if (at == versions.end() || *at != version) versions.insert(at, version);
}

}  // namespace

absl::StatusOr<std::optional<Prediction>> FamilyCache::Predict(
    const ProblemKey& key, const Constraints& constraints, int neighbours) {
  const std::string family = FamilyText(key);
  if (std::shared_ptr<const ShapeIndex> kept = Kept(family)) {
    return kept->Predict(key, constraints, neighbours);
  }
  int64_t changes = 0;
  {
    absl::MutexLock lock(&mu_);
    changes = changes_;
  }
  return PredictNearest(
      key, constraints, neighbours,
      [&](double radius, int limit) -> absl::StatusOr<NearRecords> {
        NearRecords near;
        ASSIGN_OR_RETURN(std::vector<Record> read,
                         store_->FamilyNear(key, radius, limit, &near.more));
        near.whole = radius >= kMaxShapeDistance && !near.more;
        near.records.reserve(read.size());
        for (Record& r : read) {
          near.records.push_back(std::make_shared<const Record>(std::move(r)));
        }
        if (!near.whole ||
            static_cast<int64_t>(near.records.size()) > max_records_) {
          return near;
        }
        auto index = std::make_shared<const ShapeIndex>(near.records);
        absl::MutexLock lock(&mu_);
        if (changes == changes_) families_[family] = Entry{absl::Now(), index};
        return near;
      });
}

std::shared_ptr<const ShapeIndex> FamilyCache::Kept(
    const std::string& family) {
  absl::MutexLock lock(&mu_);
  auto it = families_.find(family);
  if (it == families_.end() || absl::Now() - it->second.loaded >= ttl_) {
    return nullptr;
  }
  return it->second.family;
}

absl::StatusOr<std::shared_ptr<const FamilyCache::Records>> FamilyCache::Family(
    const ProblemKey& key) {
  ASSIGN_OR_RETURN(std::shared_ptr<const ShapeIndex> family, Indexed(key));
  const Records* records = &family->records();
  return std::shared_ptr<const Records>(std::move(family), records);
}

absl::StatusOr<std::shared_ptr<const ShapeIndex>> FamilyCache::Indexed(
    const ProblemKey& key) {
  const std::string family = FamilyText(key);
  if (std::shared_ptr<const ShapeIndex> kept = Kept(family)) return kept;
  ASSIGN_OR_RETURN(std::shared_ptr<const ShapeIndex> read, Read(key));
  absl::MutexLock lock(&mu_);
  families_[family] = Entry{absl::Now(), read};
  return read;
}

absl::StatusOr<std::shared_ptr<const ShapeIndex>> FamilyCache::Read(
    const ProblemKey& key) {
  Records records;
  RecordFilter filter = FamilyFilter(key);
  filter.without_plans = true;
  RETURN_IF_ERROR(store_->Query(
      filter, 0, 0,
      [&](const Record& r) {
        if (!SameFamily(key, r.key)) return true;
        records.push_back(std::make_shared<Record>(r));
        return static_cast<int>(records.size()) < max_records_;
      },
      [](const BadRow&) { return true; }));
  return std::make_shared<const ShapeIndex>(std::move(records));
}

absl::StatusOr<bool> FamilyCache::MayHoldOtherVersions(
    const ProblemKey& key) {
  std::vector<int> versions;
  int64_t clears = 0;
  bool fresh = false;
  {
    absl::MutexLock lock(&mu_);
    fresh = absl::Now() - versions_loaded_ < ttl_;
    if (fresh) versions = versions_;
    clears = clears_;
  }
  if (!fresh) {
    ASSIGN_OR_RETURN(versions, store_->CudnnVersions());
    absl::MutexLock lock(&mu_);
    // A read that a Clear overtook may predate an import: not kept. One
    // that a Forget overtook keeps the version that Forget added.
    if (clears == clears_) {
      for (int v : versions_) AddVersion(v, versions);
      versions_ = versions;
      versions_loaded_ = absl::Now();
    }
  }
  return std::any_of(versions.begin(), versions.end(), [&](int v) {
    return v != key.device.cudnn_version;
  });
}

void FamilyCache::Forget(const ProblemKey& key) {
  const std::string family = FamilyText(key);
  absl::MutexLock lock(&mu_);
  ++changes_;
  families_.erase(family);
  // A stored record can only add its version to those stored.
  AddVersion(key.device.cudnn_version, versions_);
}

void FamilyCache::Clear() {
  absl::MutexLock lock(&mu_);
  ++clears_;
  ++changes_;
  families_.clear();
  versions_.clear();
  versions_loaded_ = absl::InfinitePast();
}

}  // namespace tunedb
