// PendingSearch: one search, queued or running, and the callers waiting for
// it. What it searches (SearchRequest) is fixed when it is made; the rest
// (whether it waits for an idle GPU, whether it is held back, its result)
// changes under its own mutex, and every change wakes its waiters.
//
// Thread safety: thread-safe. Lock order: a device queue's mutex
// (DeviceQueues) may be held while calling in; none is taken from inside.
#ifndef TUNEDB_SERVER_TUNING_PENDING_SEARCH_H_
#define TUNEDB_SERVER_TUNING_PENDING_SEARCH_H_

#include <functional>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/valid_key.h"
#include "tunedb/record.h"

namespace tunedb {

// What a search is for, fixed when it is queued.
struct SearchRequest {
  ValidKey key;
  int device_index = 0;
  bool force = false;         // search even if a record exists anywhere
  int revalidate_from = 0;    // TuneMode::revalidate_from_cudnn
  bool revalidate_older_driver = false;  // TuneMode's
  // It re-times the older driver's record stored here: asks the fleet
  // nothing (the fleet's record of the key may be that very one).
  bool retimes_stored = false;
};

// What a waiter of a search got.
struct SearchOutcome {
  // Answered at once: the search is held back (TuneMode::return_if_held);
  // no record yet.
  bool held = false;
  std::shared_ptr<const Record> record;  // never null unless held
  bool searched = false;                 // a search ran here (else: fleet)
  bool waited_on_fleet = false;  // another host's search was waited for
};

class PendingSearch {
 public:
  // `when_idle`: a program's miss (SearchWhen::kWhenIdle), which runs only
  // while no program uses the device.
  PendingSearch(SearchRequest request, bool when_idle)
      : request_(std::move(request)), when_idle_(when_idle) {}

  const SearchRequest& request() const { return request_; }
  const ValidKey& key() const { return request_.key; }
  int device_index() const { return request_.device_index; }

  bool when_idle() const ABSL_LOCKS_EXCLUDED(mu_);
  // A kNow caller joined: it runs as soon as its queue reaches it, and is
  // no longer held.
  void RunNow() ABSL_LOCKS_EXCLUDED(mu_);
  // Held back for programs: marks it held the first time and returns true
  // then (counted once); false if it was held so before.
  bool HoldForPrograms() ABSL_LOCKS_EXCLUDED(mu_);
  // Marks it held (it will not run soon) and wakes its waiters; not counted
  // as held for programs.
  void MarkHeld() ABSL_LOCKS_EXCLUDED(mu_);
  // Its worker took it: no longer held.
  void Taken() ABSL_LOCKS_EXCLUDED(mu_);
  // True the first time only: the fleet is asked once per search.
  bool FirstFleetAsk() ABSL_LOCKS_EXCLUDED(mu_);
  // Another host's search of the key is waited for.
  void MarkWaitedOnFleet() ABSL_LOCKS_EXCLUDED(mu_);

  // Ends the search with `result` (`searched`: a search ran here) and wakes
  // every waiter.
  void Finish(absl::StatusOr<std::shared_ptr<const Record>> result,
              bool searched) ABSL_LOCKS_EXCLUDED(mu_);

  // Waits until the search ends, `deadline` passes (DEADLINE_EXCEEDED), or
  // `cancelled` (polled; may be empty) says the caller went away
  // (CANCELLED); with `return_if_held`, answers held once it is held back.
  // The search's own error where it failed.
  absl::StatusOr<SearchOutcome> Wait(
      bool return_if_held, absl::Time deadline,
      const std::function<bool()>& cancelled) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const SearchRequest request_;
  mutable absl::Mutex mu_;
  absl::CondVar cv_;  // with mu_: any change below
  bool when_idle_ ABSL_GUARDED_BY(mu_);
  // Counted as held for programs (HoldForPrograms).
  bool counted_waiting_ ABSL_GUARDED_BY(mu_) = false;
  // Not running soon: held back until the GPU is idle, or queued behind a
  // running search.
  bool held_ ABSL_GUARDED_BY(mu_) = false;
  bool fleet_asked_ ABSL_GUARDED_BY(mu_) = false;
  bool waited_on_fleet_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  bool searched_ ABSL_GUARDED_BY(mu_) = false;
  absl::StatusOr<std::shared_ptr<const Record>> result_ ABSL_GUARDED_BY(mu_) =
      absl::UnknownError("not run");
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_PENDING_SEARCH_H_
