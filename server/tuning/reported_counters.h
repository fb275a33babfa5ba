// ReportedCounters: counters that client programs report to the daemon
// (ReportCounters rpc), summed since the daemon started, e.g. what each
// process under `tunedb run` did with the cuDNN calls it intercepted
// ("preload.hit", "preload.miss", "preload.daemon_down", ...). They show in
// Stats, `tunedb stats` and the metrics.
//
// Bounded: at most kMaxNames distinct names are kept; past that, counts of
// names not yet known, whatever their source, are added to the one overflow
// series kOverflowName ("other": no dot, so no client name is spelt so).
// So at most kMaxNames + 1 series exist however many names and sources
// clients send, the daemon's memory does not grow with them, and no report
// is lost (docs/reliability.md, "Reported counters").
//
// Thread safety: thread-safe.
#ifndef TUNEDB_SERVER_TUNING_REPORTED_COUNTERS_H_
#define TUNEDB_SERVER_TUNING_REPORTED_COUNTERS_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace tunedb {

class ReportedCounters {
 public:
  static constexpr size_t kMaxNames = 256;
  static constexpr char kOverflowName[] = "other";

  // Adds `counts`, keyed "source.name" (validated: names and values are the
  // caller's check). An empty report adds nothing and is not counted.
  void Add(const std::map<std::string, int64_t>& counts);

  struct Snapshot {
    int64_t reports = 0;                  // reports added
    std::map<std::string, int64_t> sums;  // name -> sum
  };
  Snapshot Get() const;

 private:
  mutable absl::Mutex mu_;
  int64_t reports_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, int64_t> sums_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_REPORTED_COUNTERS_H_
