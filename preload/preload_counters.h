// PreloadCounters: what the preload did with each call it intercepted,
// summed over the process and written as one line at exit, e.g.
//
//   tunedb preload: 68 calls: 60 hits, 8 misses (tune asked),
//   0 passed through; daemon unix:/run/tunedb/tunedb.sock
//
// ("misses (noted, tuned after)" when they go to a misses file for `tunedb
// run --tune-after` instead; with ", N fallback lists answered empty" and
// ", N not pinned (cuDNN's first heuristic choice)" after the misses when
// any were),
// followed, when any call was passed through, by the reasons and counts,
// and by "; N alternative plans not built" when the shim left plans of
// lead-only answers unbuilt, and "; N stored plans loaded" (", M refused")
// when plans were loaded instead of compiled (not calls: builds the program
// asked for; PlanEvent).
//
// Thread safety: Count is lock-free and thread-safe; Summary reads a
// snapshot.
#ifndef TUNEDB_PRELOAD_PRELOAD_COUNTERS_H_
#define TUNEDB_PRELOAD_PRELOAD_COUNTERS_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <string>

#include "absl/strings/string_view.h"

namespace tunedb::preload {

// Why a call was answered or passed through.
enum class Outcome {
  kHit = 0,          // answered from tunedb
  kMiss,             // nothing stored yet: passed through, tune asked
  kFallbackEmpty,    // graph API: a fallback-list query on a graph whose
                     // answer held a config every filter keeps: answered
                     // with no configs (a count query and its fill in a
                     // row count once)
  kPinMiss,          // a pinned run's problem without a pinned answer:
                     // answered with cuDNN's first heuristic choice
  kDaemonDown,       // daemon unreachable: passed through
  kDisabled,         // TUNEDB_PRELOAD=off
  kCudnnVersion,     // a cuDNN whose struct layout this build does not know
  kUnsupported,      // descriptors tunedb does not key (e.g. int8, strides)
  kNoDevice,         // no current CUDA context / bad TUNEDB_DEVICE_KEY
  kBadArguments,     // null pointers, count < 1: cuDNN reports the error
  kHeuristicFailed,  // the real Get_v7 failed on a hit
  kForked,           // called in a child forked after the client started
  kConfigFailed,     // graph API: no tuned engine config finalizes on
                     // the caller's graph
  kInternalError,    // anything else (an exception, a client error)
  kNumOutcomes
};

absl::string_view OutcomeName(Outcome o);  // "hit", "miss", "daemon_down", ...

// What became of a plan the program finalized, where tunedb had a part.
enum class PlanEvent {
  kNotBuilt = 0,  // an alternative of a lead-only answer left unbuilt
  kStoredLoaded,  // its config's stored plan loaded instead of compiling
  kStoredRefused,  // a stored plan not used (cuDNN refused it, or it did
                   // not fit the caller's graph): built as without tunedb
  kStoredFailedToRun,  // a loaded stored plan that cuDNN did not run: its
                       // config built by cuDNN ran instead (or, where that
                       // failed too, the program got cuDNN's error)
  kNumPlanEvents
};

absl::string_view PlanEventName(PlanEvent e);  // "plans_not_built", ...

class PreloadCounters {
 public:
  void Count(Outcome o) {
    counts_[static_cast<int>(o)].fetch_add(1, std::memory_order_relaxed);
  }
  int64_t Get(Outcome o) const {
    return counts_[static_cast<int>(o)].load(std::memory_order_relaxed);
  }
  void CountPlan(PlanEvent e) {
    plans_[static_cast<int>(e)].fetch_add(1, std::memory_order_relaxed);
  }
  int64_t Plans(PlanEvent e) const {
    return plans_[static_cast<int>(e)].load(std::memory_order_relaxed);
  }
  int64_t Total() const;
  // The exit line (no trailing newline). `misses_tuned_after`: misses were
  // written to a misses file, not sent to the daemon to tune.
  std::string Summary(absl::string_view address,
                      bool misses_tuned_after = false) const;
  // What ReportCounters sends: "calls", every outcome that happened, by
  // OutcomeName, and every plan event that happened, by PlanEventName.
  std::map<std::string, int64_t> Counts() const;

 private:
  std::atomic<int64_t> counts_[static_cast<int>(Outcome::kNumOutcomes)] = {};
  std::atomic<int64_t> plans_[static_cast<int>(PlanEvent::kNumPlanEvents)] =
      {};
};

}  // namespace tunedb::preload

#endif  // TUNEDB_PRELOAD_PRELOAD_COUNTERS_H_
