#include "server/tuning/reported_counters.h"

#include <limits>

namespace tunedb {

void ReportedCounters::Add(const std::map<std::string, int64_t>& counts) {
  if (counts.empty()) return;
  absl::MutexLock lock(&mu_);
  for (const auto& [name, value] : counts) {
    auto it = sums_.find(name);
    if (it == sums_.end()) {
      const bool full = sums_.size() - sums_.count(kOverflowName) >= kMaxNames;
      it = sums_.emplace(full ? kOverflowName : name, 0).first;
    }
    int64_t& sum = it->second;
    // Saturates rather than wraps.
    sum = value > std::numeric_limits<int64_t>::max() - sum
              ? std::numeric_limits<int64_t>::max()
              : sum + value;
  }
  ++reports_;
}

ReportedCounters::Snapshot ReportedCounters::Get() const {
  absl::MutexLock lock(&mu_);
  return Snapshot{reports_, sums_};
}

}  // namespace tunedb
