#include "server/tuning/reported_counters.h"

#include <limits>

#include "absl/strings/str_cat.h"

namespace tunedb {

absl::Status ReportedCounters::Add(
    const std::map<std::string, int64_t>& counts) {
  std::lock_guard<std::mutex> lock(mu_);
  size_t added = 0;
  for (const auto& [name, value] : counts) {
    if (sums_.count(name) == 0) ++added;
  }
  if (sums_.size() + added > kMaxNames) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the daemon keeps at most ", kMaxNames, " reported counter names"));
  }
  for (const auto& [name, value] : counts) {
    int64_t& sum = sums_[name];
    // Saturates rather than wraps.
    sum = value > std::numeric_limits<int64_t>::max() - sum
              ? std::numeric_limits<int64_t>::max()
              : sum + value;
  }
  ++reports_;
  return absl::OkStatus();
}

ReportedCounters::Snapshot ReportedCounters::Get() const {
  std::lock_guard<std::mutex> lock(mu_);
  return Snapshot{reports_, sums_};
}

}  // namespace tunedb
