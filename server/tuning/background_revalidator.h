// BackgroundRevalidator: when a daemon serves a cuDNN version for which older
// records of the same GPU model exist, it makes that version's records from
// them in the background (revalidation.h, docs/revalidation.md), so an
// upgrade does not leave the fleet an empty database.
//
// On start it plans (PlanRevalidations) every problem stored for a served
// device's GPU model under another cuDNN version and not under the served
// one, then revalidates them a few at a time per GPU as TuningCore Tunes
// with SearchWhen::kWhenIdle: they never compete with programs for their
// GPU. A key that fails is logged and counted, and the others go on. A
// daemon stopped half-way loses nothing: what was made is stored, and the
// next start plans only the keys still missing. Old records are only read.
// With a fleet database each Tune asks the fleet first and searches under
// the key's fleet lease, so a fleet revalidates each key once.
//
// Thread safety: every public method is thread-safe.
#ifndef TUNEDB_SERVER_TUNING_BACKGROUND_REVALIDATOR_H_
#define TUNEDB_SERVER_TUNING_BACKGROUND_REVALIDATOR_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/tuning/tuning_core.h"
#include "store/store.h"
#include "tunedb/problem.h"

namespace tunedb {

// One record a background revalidation makes: `problem` on `device`, from
// its record under cuDNN `from_cudnn` (cuDNN's encoding).
struct RevalidationJob {
  DeviceKey device;
  ConvProblem problem;
  int from_cudnn = 0;
};

// The jobs for `served` devices (repeats counted once), in the store's
// order: each problem stored for a device's GPU model (gpu, cc, sms) under
// another cuDNN version and not under the device's own, from the newest
// other version that has it. At most `limit` jobs (<= 0: no limit).
absl::StatusOr<std::vector<RevalidationJob>> PlanRevalidations(
    Store& store, const std::vector<DeviceKey>& served, int64_t limit);

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
    int64_t done = 0;    // stored (revalidated, or searched in full)
    int64_t failed = 0;  // Tune failed; retried at the next start
    bool finished = false;  // every key tried, or stopped
  };

  // Starts planning at once on a thread of its own. `store` and `core` must
  // outlive the revalidator.
  BackgroundRevalidator(const Options& options, Store* store,
                        TuningCore* core);
  ~BackgroundRevalidator();

  // Stops: Tunes waiting are cancelled (their searches, if running, still
  // complete and are stored). Idempotent.
  void Stop();
  Progress progress() const;
  // Waits until progress().finished or `timeout` passes; whether it
  // finished.
  bool WaitFinished(absl::Duration timeout) const;

 private:
  void Run();
  void Work();
  bool stopping() const { return stop_.load(std::memory_order_relaxed); }

  const Options options_;
  Store* const store_;
  TuningCore* const core_;
  std::atomic<bool> stop_{false};

  mutable absl::Mutex mu_;
  std::vector<RevalidationJob> jobs_ ABSL_GUARDED_BY(mu_);
  size_t next_ ABSL_GUARDED_BY(mu_) = 0;
  Progress progress_ ABSL_GUARDED_BY(mu_);
  int workers_left_ ABSL_GUARDED_BY(mu_) = 0;
  std::mutex join_mu_;    // Stop's join of planner_
  std::thread planner_;  // plans, then runs and joins the workers
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_BACKGROUND_REVALIDATOR_H_
