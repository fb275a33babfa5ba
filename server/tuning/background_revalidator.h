// BackgroundRevalidator: when a daemon serves a cuDNN version for which older
// records of the same GPU model exist, it makes that version's records from
// them in the background (revalidation.h, docs/revalidation.md), so an
// upgrade does not leave the fleet an empty database.
//
// On start it plans (PlanRevalidations, revalidation_plan.h) every problem
// held for a served device's GPU model under another cuDNN version, in its
// own store or, with a fleet database, in the fleet, and held under the
// served one neither here nor in the fleet; then revalidates them a few at
// a time per GPU as TuningCore Tunes with SearchWhen::kWhenIdle: they never
// compete with programs for their GPU. An old record only the fleet holds
// is first stored locally (as the fleet's answers are), where the
// revalidation and the next start read it. Each Tune asks the fleet first
// and searches under the key's fleet lease, so hosts that start on a new
// version together search each key once, and one that finds the new record
// in the fleet takes it. A fleet that cannot be read leaves the local plan;
// a key that fails is logged and counted, and the others go on. A daemon
// stopped half-way loses nothing: what was made is stored, and the next
// start plans only the keys still missing. Old versions' records are never
// changed.
//
// After a driver upgrade it also plans the records stored here under a
// served device's own key that were measured under an older driver than
// the device's, and re-times them as Tunes with revalidate_older_driver:
// each re-timed record replaces the old driver's record of its key and
// carries the new driver, so the next start does not plan it again. Only
// the local store is read for these (not the fleet's records), and their
// Tunes ask the fleet nothing and take no lease: the fleet's record of the
// key may be the very one they re-time.
//
// Thread safety: every public method is thread-safe.
#ifndef TUNEDB_SERVER_TUNING_BACKGROUND_REVALIDATOR_H_
#define TUNEDB_SERVER_TUNING_BACKGROUND_REVALIDATOR_H_

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/tuning/fleet_sync.h"
#include "server/tuning/revalidation_plan.h"
#include "server/tuning/tuning_core.h"
#include "store/store.h"
#include "tunedb/problem.h"

namespace tunedb {

class BackgroundRevalidator {
 public:
  struct Options {
    // Revalidations in flight per GPU: one searching, one queued behind
    // it. Default 2.
    int parallel = 2;
    // At most this many keys per start (0: all). Default 0.
    int64_t max_keys = 0;
  };
  struct Progress {
    int64_t planned = 0;
    // Of `planned`: those whose old record only the fleet held.
    int64_t from_fleet = 0;
    // Whether the fleet's records were planned from (false without a fleet
    // database, or where it could not be read).
    bool fleet_planned = false;
    int64_t done = 0;    // stored (revalidated, or searched in full)
    // The old record could not be brought from the fleet, or the Tune
    // failed; tried again at the next start.
    int64_t failed = 0;
    bool finished = false;  // every key tried, or stopped
  };

  // Starts planning at once on a thread of its own. `store`, `core` and
  // `fleet` (null: no fleet database; else the core's) must outlive the
  // revalidator.
  BackgroundRevalidator(const Options& options, Store* store,
                        TuningCore* core, FleetSync* fleet = nullptr);
  ~BackgroundRevalidator();

  // Stops: Tunes waiting are cancelled (their searches, if running, still
  // complete and are stored). Idempotent.
  void Stop() ABSL_LOCKS_EXCLUDED(join_mu_);
  Progress progress() const ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until progress().finished or `timeout` passes; whether it
  // finished.
  bool WaitFinished(absl::Duration timeout) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // Plans and logs the plan; empty where the store cannot be read.
  RevalidationPlan Plan(const std::vector<ServedDevice>& served);
  void Run();
  void Work();
  // Stores the fleet's record `old` (a job's source only the fleet holds)
  // here, unless a record of that key is stored already (never replaced).
  absl::Status KeepFleetSource(const ProblemKey& old);
  // One job: its source brought here where needed, then its Tune.
  absl::Status Revalidate(const RevalidationJob& job);
  bool stopping() const { return stop_.load(std::memory_order_relaxed); }

  const Options options_;
  Store* const store_;
  TuningCore* const core_;
  FleetSync* const fleet_;  // null: no fleet database
  std::atomic<bool> stop_{false};

  mutable absl::Mutex mu_;
  std::vector<RevalidationJob> jobs_ ABSL_GUARDED_BY(mu_);
  size_t next_ ABSL_GUARDED_BY(mu_) = 0;
  Progress progress_ ABSL_GUARDED_BY(mu_);
  int workers_left_ ABSL_GUARDED_BY(mu_) = 0;
  // Stop's join of planner_, which callers on several threads may ask for.
  absl::Mutex join_mu_;
  // Plans, then runs and joins the workers.
  std::thread planner_ ABSL_GUARDED_BY(join_mu_);
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_BACKGROUND_REVALIDATOR_H_
