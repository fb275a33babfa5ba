#include "server/tuning/family_cache.h"

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
  RETURN_IF_ERROR(store_->Query(
      FamilyFilter(key), 0, 0,
      [&](const Record& r) {
        if (!SameFamily(key, r.key)) return true;
        auto copy = std::make_shared<Record>(r);
        for (AlgoResult& a : copy->results) a.plan.clear();
        records->push_back(std::move(copy));
        return static_cast<int>(records->size()) < max_records_;
      },
      [](const BadRow&) { return true; }));
  return std::shared_ptr<const Records>(std::move(records));
}

void FamilyCache::Forget(const ProblemKey& key) {
  const std::string family = FamilyText(key);
  absl::MutexLock lock(&mu_);
  families_.erase(family);
}

void FamilyCache::Clear() {
  absl::MutexLock lock(&mu_);
  families_.clear();
}

}  // namespace tunedb
