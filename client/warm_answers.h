// WarmAnswers: the replies of the one Warm call a client with a program
// makes (ClientOptions::warm_at_start), each standing for the Lookup the
// client would send for its key and constraints, and the thread that makes
// the call.
//
// Start runs the call once, on a thread of its own, never the caller's.
// Take hands out the reply for a key and constraints once (a second miss
// of the same key, after the cached answer expired, asks the daemon anew).
// While the call is in flight Take waits for it, but only until `patience`
// after its start: all callers together wait at most that long on one
// Warm. A failed call (an older daemon answers UNIMPLEMENTED) has no
// replies, and Take then answers nothing at once.
//
// Thread safety: thread-safe. The destructor joins the thread: whatever
// the call waits on must end first (DaemonLink::Shutdown cancels it).
#ifndef TUNEDB_CLIENT_WARM_ANSWERS_H_
#define TUNEDB_CLIENT_WARM_ANSWERS_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "client/client_counters.h"
#include "client/daemon_link.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

class WarmAnswers {
 public:
  // The call: its entries, or why it failed.
  using Fetch =
      std::function<absl::StatusOr<std::vector<DaemonLink::WarmEntry>>()>;

  // `counters` (kWarmKeys: the entries the call brought) outlives it.
  WarmAnswers(absl::Duration patience, ClientCounters& counters);
  ~WarmAnswers();

  // The first Start runs `fetch` on the thread and returns at once; later
  // ones do nothing.
  void Start(Fetch fetch) ABSL_LOCKS_EXCLUDED(mu_);

  // The reply for `key` under `constraints`, handed out once. nullopt when
  // the call has none for them, failed or was never started, or is still
  // in flight once the wait is over: with `may_wait`, a call in flight is
  // waited for until `patience` after its start; without, not at all.
  std::optional<DaemonLink::Reply> Take(const ProblemKey& key,
                                        const Constraints& constraints,
                                        bool may_wait) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  enum class State { kIdle, kInFlight, kDone };

  void Finish(absl::StatusOr<std::vector<DaemonLink::WarmEntry>> result)
      ABSL_LOCKS_EXCLUDED(mu_);
  bool Settled() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return state_ == State::kDone;
  }

  const absl::Duration patience_;
  ClientCounters& counters_;

  absl::Mutex mu_;
  State state_ ABSL_GUARDED_BY(mu_) = State::kIdle;
  absl::Time started_ ABSL_GUARDED_BY(mu_);
  // By SlotText(key, constraints).
  std::map<std::string, DaemonLink::Reply> replies_ ABSL_GUARDED_BY(mu_);
  // Set by the first Start, under mu_; joined by the destructor.
  std::thread thread_;
};

}  // namespace tunedb

#endif  // TUNEDB_CLIENT_WARM_ANSWERS_H_
