#include "server/tuning/reported_counters.h"

#include <limits>

namespace tunedb {

void ReportedCounters::Add(const std::map<std::string, int64_t>& counts) {
  if (counts.empty()) return;
  absl::MutexLock lock(&mu_);
  for (const auto& [name, value] : counts) {
    std::string key = name;
    if (sums_.count(key) == 0 && sums_.size() >= kMaxNames) {
      key = name.substr(0, name.find('.')) + ".other";
    }
    int64_t& sum = sums_[key];
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
