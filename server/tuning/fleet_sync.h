// FleetSync: a daemon's side of the fleet tier (docs/fleet.md), between the
// tuning core and the fleet database (store/fleet/fleet_store.h):
//
// - Resolve, before a search: the fleet's record for the key if it has one
//   (read-through), else the key's lease (one search fleet-wide), else who
//   holds it; Poll asks again for a key another host is searching.
// - write-behind: the drainer thread publishes the local outbox
//   (Store::PutForFleet) in batches, removes what was published, and so
//   releases this daemon's leases on those keys; Wake starts it at once.
// - the renewer thread extends the leases this daemon holds while their
//   searches run.
// - health: every failure is logged and counted, never thrown; after an
//   unreachable or refusing database the Tune path skips the fleet for
//   `retry` (searching locally), while the drainer keeps probing.
//
// Thread safety: all methods are thread-safe.
#ifndef TUNEDB_SERVER_TUNING_FLEET_SYNC_H_
#define TUNEDB_SERVER_TUNING_FLEET_SYNC_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/valid_key.h"
#include "store/fleet/fleet_store.h"
#include "store/store.h"
#include "tunedb/record.h"

namespace tunedb {

// The fleet tier's state for Stats, `tunedb stats` and doctor.
struct FleetHealth {
  bool enabled = false;      // the daemon has a fleet database
  std::string database;      // its URL without the password
  bool connected = false;    // the last fleet operation succeeded
  std::string last_error;    // the last failure ("" if none since start)
  int64_t last_error_us = 0;
  int64_t outbox = 0;        // records waiting to be published
  int64_t published = 0;     // records published since start
  int64_t fetched = 0;       // local misses answered from the fleet
  int64_t claims = 0;        // leases taken for a search
  int64_t waits = 0;         // keys left to another host's lease
  int64_t errors = 0;        // failed fleet operations
  int64_t jobs_done = 0;     // fleet prewarm jobs finished here
};

class FleetSync {
 public:
  struct Options {
    // Lease on a key while its search runs, renewed every third of it.
    // Default 30 s.
    absl::Duration lease = absl::Seconds(30);
    // How often a key held by another host is asked for again. Default
    // 25 ms.
    absl::Duration poll = absl::Milliseconds(25);
    // After a failed operation: the Tune path skips the fleet this long and
    // the drainer waits this long before trying again. Default 1 s.
    absl::Duration retry = absl::Seconds(1);
    // Outbox entries published per transaction. Default 256.
    int publish_batch = 256;
    // This daemon's lease holder name; "" = host/pid/random.
    std::string holder;
  };

  enum class Outcome {
    kFound,        // the fleet has a record: `record`
    kClaimed,      // this daemon holds the key's lease: search
    kHeld,         // another host searches it: Poll later
    kUnavailable,  // the fleet cannot be asked now: search locally
  };
  struct Resolution {
    Outcome outcome = Outcome::kUnavailable;
    std::optional<Record> record;
  };

  // `fleet` and `store` must outlive this; starts the threads.
  FleetSync(const Options& options, FleetStore* fleet, Store* store);
  ~FleetSync();

  // The fleet's record for `key` (read-through only: no lease), or nullopt
  // where it has none or cannot be asked.
  std::optional<Record> Fetch(const ValidKey& key);
  // Before a search of `key`: see Outcome.
  Resolution Resolve(const ValidKey& key);
  // For a key another host held: kFound, kHeld, or kClaimed (the lease was
  // free or expired and is ours now), or kUnavailable.
  Resolution Poll(const ValidKey& key);
  // A search of `key` stored its result through the outbox: publish soon.
  void Wake() ABSL_LOCKS_EXCLUDED(mu_);
  // A search of `key` failed: give up its lease.
  void SearchFailed(const ValidKey& key) ABSL_LOCKS_EXCLUDED(mu_);
  // A fleet prewarm job finished here.
  void CountJobDone() { jobs_done_.fetch_add(1); }

  FleetHealth Health() ABSL_LOCKS_EXCLUDED(mu_);
  const std::string& holder() const { return options_.holder; }
  FleetStore& fleet() { return *fleet_; }
  const Options& options() const { return options_; }
  // False (the caller treats the fleet as unavailable) within `retry`
  // after a failure.
  bool Reachable() ABSL_LOCKS_EXCLUDED(mu_);
  // Counts `status` of `what` (e.g. "claiming a key"); on failure logs it,
  // keeps it as the last error (an unreachable database named first, the
  // operation after it) and starts the retry window. Returns status.ok().
  bool Succeeded(const absl::Status& status, const char* what)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Publishes what is in the outbox now (one pass; tests and shutdown).
  absl::Status DrainOnce() ABSL_LOCKS_EXCLUDED(mu_);
  // Stops the threads after one last drain attempt.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // Resolve (first) and Poll: the fleet's record, else ClaimOrWait.
  Resolution Ask(const ValidKey& key, bool first);
  // Claims or reports who holds `key` (after a fleet miss); `first`: the
  // first ask for this search (counted as a wait when held).
  Resolution ClaimOrWait(const ValidKey& key, bool first);
  void DrainLoop() ABSL_LOCKS_EXCLUDED(mu_);
  void RenewLoop() ABSL_LOCKS_EXCLUDED(mu_);
  // Waits on cv_ until Stop (or, with `or_wake`, Wake) was called or
  // `timeout` has passed.
  void WaitForSignal(absl::Duration timeout, bool or_wake)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Options options_;
  FleetStore* const fleet_;
  Store* const store_;

  absl::Mutex mu_;
  absl::CondVar cv_;  // with mu_: stop_ or wake_ set
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool wake_ ABSL_GUARDED_BY(mu_) = false;
  // Key texts we hold leases on.
  std::set<std::string> held_ ABSL_GUARDED_BY(mu_);
  std::string last_error_ ABSL_GUARDED_BY(mu_);
  int64_t last_error_us_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time last_logged_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Time skip_until_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  std::thread drainer_, renewer_;

  std::atomic<bool> connected_{false};
  std::atomic<int64_t> published_{0}, fetched_{0}, claims_{0}, waits_{0},
      errors_{0}, jobs_done_{0};
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_FLEET_SYNC_H_
