// FleetWaiter: a local miss asked of the fleet database before it is
// searched (docs/fleet.md). A record found there is kept here and answers
// the search; a key another host is searching is left to that host, polled
// on the waiter's thread until its result comes (the search then ends with
// it) or its lease expires (the search is queued again, to run here).
//
// Thread safety: thread-safe.
#ifndef TUNEDB_SERVER_TUNING_FLEET_WAITER_H_
#define TUNEDB_SERVER_TUNING_FLEET_WAITER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/tuning/pending_search.h"
#include "tunedb/record.h"

namespace tunedb {

class FleetSync;
class StoredRecords;

class FleetWaiter {
 public:
  // Ends a search with its result (searched: false, it came from the fleet).
  using Complete =
      std::function<void(const std::shared_ptr<PendingSearch>&,
                         absl::StatusOr<std::shared_ptr<const Record>>)>;
  // Queues a search again to run here; false when stopping.
  using Requeue = std::function<bool(const std::shared_ptr<PendingSearch>&)>;

  // Starts the polling thread; `fleet` and `records` must outlive this.
  FleetWaiter(FleetSync* fleet, StoredRecords* records, Complete complete,
              Requeue requeue);
  ~FleetWaiter();  // Stop()

  // Before `search` runs on a device whose driver is `driver`: asks the
  // fleet, once per search, unless it is forced or re-times the record
  // stored here. True where the fleet answered it (completed) or another
  // host searches it (left waiting here); false: search here.
  bool Resolve(const std::shared_ptr<PendingSearch>& search,
               const std::string& driver) ABSL_LOCKS_EXCLUDED(mu_);

  // Stops the thread; returns the searches still waiting for another host.
  std::vector<std::shared_ptr<PendingSearch>> Stop() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void WaitLoop() ABSL_LOCKS_EXCLUDED(mu_);
  // Polls the fleet once for each of `waiting`; those still held elsewhere.
  std::vector<std::shared_ptr<PendingSearch>> PollOnce(
      std::vector<std::shared_ptr<PendingSearch>> waiting)
      ABSL_LOCKS_EXCLUDED(mu_);

  FleetSync* const fleet_;
  StoredRecords* const records_;
  const Complete complete_;
  const Requeue requeue_;
  absl::Mutex mu_;
  absl::CondVar cv_;  // with mu_: stopping
  // Searches left to another host's fleet lease.
  std::vector<std::shared_ptr<PendingSearch>> waiting_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_FLEET_WAITER_H_
