#include "server/tuning/inflight_searches.h"

#include <utility>

#include "common/status_macros.h"

namespace tunedb {

bool InflightSearches::Contains(const std::string& key_text) const {
  absl::MutexLock lock(&mu_);
  return searches_.count(key_text) > 0;
}

absl::StatusOr<InflightSearches::Entry> InflightSearches::JoinOrStart(
    const std::string& key_text, absl::FunctionRef<void(PendingSearch&)> join,
    absl::FunctionRef<absl::StatusOr<std::shared_ptr<PendingSearch>>()>
        start) {
  absl::MutexLock lock(&mu_);
  Entry entry;
  auto it = searches_.find(key_text);
  if (it != searches_.end()) {
    entry.search = it->second;
    entry.joined = true;
    join(*entry.search);
    return entry;
  }
  ASSIGN_OR_RETURN(entry.search, start());
  if (entry.search != nullptr) searches_[key_text] = entry.search;
  return entry;
}

void InflightSearches::Remove(const std::string& key_text) {
  absl::MutexLock lock(&mu_);
  searches_.erase(key_text);
}

}  // namespace tunedb
