// ReportedCounters: counters that client programs report to the daemon
// (ReportCounters rpc), summed since the daemon started, e.g. what each
// process under `tunedb run` did with the cuDNN calls it intercepted
// ("preload.hit", "preload.miss", "preload.daemon_down", ...). They show in
// Stats, `tunedb stats` and the metrics.
//
// Bounded: at most kMaxNames distinct names are kept; a report that would
// add more is refused whole (RESOURCE_EXHAUSTED), so the daemon's memory
// does not grow with what clients send.
//
// Thread safety: thread-safe.
#ifndef TUNEDB_SERVER_TUNING_REPORTED_COUNTERS_H_
#define TUNEDB_SERVER_TUNING_REPORTED_COUNTERS_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "absl/status/status.h"

namespace tunedb {

class ReportedCounters {
 public:
  static constexpr size_t kMaxNames = 256;

  // Adds `counts` (validated: names and values are the caller's check).
  absl::Status Add(const std::map<std::string, int64_t>& counts);

  struct Snapshot {
    int64_t reports = 0;                  // reports added
    std::map<std::string, int64_t> sums;  // name -> sum
  };
  Snapshot Get() const;

 private:
  mutable std::mutex mu_;
  int64_t reports_ = 0;                  // guarded by mu_
  std::map<std::string, int64_t> sums_;  // guarded by mu_
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_REPORTED_COUNTERS_H_
