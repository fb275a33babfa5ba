// DeviceQueues: one bounded queue and one worker thread per device, and the
// idle hold. A worker runs its queue's searches one at a time; a program's
// miss (PendingSearch::when_idle) is passed over by every other search and
// runs only once the device has been idle (GpuUse) for Options::idle_quiet
// without a break, asked again every idle_poll. Also the picks of a device
// for a key: least busy, and least busy of those no program uses.
//
// Thread safety: thread-safe. Each queue has its own mutex, taken after
// InflightSearches' and before a PendingSearch's.
#ifndef TUNEDB_SERVER_TUNING_DEVICE_QUEUES_H_
#define TUNEDB_SERVER_TUNING_DEVICE_QUEUES_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/device_info.h"
#include "server/tuning/gpu_use.h"
#include "server/tuning/pending_search.h"
#include "tunedb/problem.h"

namespace tunedb {

class DeviceQueues {
 public:
  struct Options {
    // Searches waiting per device before RESOURCE_EXHAUSTED.
    int queue_capacity = 1024;
    // Whether a program uses a device; null: every search runs as kNow.
    GpuUse* gpu_use = nullptr;
    // How often a queue of only programs' misses asks gpu_use again.
    absl::Duration idle_poll = absl::Seconds(1);
    // How long a device must have been idle before a miss runs on it.
    absl::Duration idle_quiet = absl::Seconds(3);
  };
  // Runs one search on device `index`, on its worker thread.
  using RunSearch =
      std::function<void(int index, const std::shared_ptr<PendingSearch>&)>;

  DeviceQueues(const Options& options, std::vector<DeviceInfo> devices);
  ~DeviceQueues();  // stops and joins the workers

  // Starts one worker per device, each calling `run` for its searches.
  void Start(RunSearch run);

  const std::vector<DeviceInfo>& devices() const { return devices_; }
  // A device serving `device` (nullopt: the first), or FAILED_PRECONDITION.
  absl::StatusOr<int> PickDevice(const std::optional<DeviceKey>& device) const;
  // The least busy device with this key, or -1.
  int LeastBusy(const DeviceKey& key) const;
  // For a program's miss: the least busy device with this key that no
  // program uses (and whose worker does not hold), else LeastBusy.
  int LeastBusyIdle(const DeviceKey& key);
  // Searches waiting and running on device `index` (0 for no such device).
  int QueueDepth(int index) const;

  // Queues `search` on its device: UNAVAILABLE when stopping,
  // RESOURCE_EXHAUSTED (counted as rejected) when the queue is full. A
  // program's miss queued where the worker holds for programs is held now;
  // behind a running search, it is marked held.
  absl::Status Enqueue(const std::shared_ptr<PendingSearch>& search);
  // Queues `search` again (after a fleet wait); false when stopping.
  bool Requeue(const std::shared_ptr<PendingSearch>& search);
  // A kNow caller joined `search`: it runs as soon as its queue reaches it.
  void RunNow(PendingSearch& search);

  // Stops the workers; returns the searches still queued (not run).
  std::vector<std::shared_ptr<PendingSearch>> Stop();
  // Waits for the workers (a running search ends first); warns of one still
  // running once `drain` has passed.
  void Join(absl::Time drain);

  int64_t waited_for_idle() const { return waited_for_idle_.load(); }
  int64_t rejected() const { return rejected_.load(); }

 private:
  // One device's queue and worker.
  struct Queue {
    mutable absl::Mutex mu;
    absl::CondVar cv;  // with mu: queued, stopping, or a search made kNow
    std::deque<std::shared_ptr<PendingSearch>> queue ABSL_GUARDED_BY(mu);
    bool running ABSL_GUARDED_BY(mu) = false;  // a search is in progress
    bool stop ABSL_GUARDED_BY(mu) = false;
    // Since when gpu_use has found the device idle without a break
    // (InfiniteFuture: in use at the last ask, or not asked yet).
    absl::Time idle_since ABSL_GUARDED_BY(mu) = absl::InfiniteFuture();
    // The worker holds its programs' misses back (it last found the device
    // in use, or idle for less than idle_quiet): one queued now is held at
    // once.
    bool holding ABSL_GUARDED_BY(mu) = false;
    // When gpu_use was last asked by this worker.
    absl::Time last_asked ABSL_GUARDED_BY(mu) = absl::InfinitePast();
    std::thread thread;
  };

  // Whether a program uses device `index` (false without gpu_use).
  bool InUse(int index) const;
  // Whether device `index`'s worker holds its programs' misses back now.
  bool Holding(int index) const;
  // Takes the next search that may run on `q` (device `index`): the first
  // kNow one, else the first program's miss once the device has been idle
  // for idle_quiet. Null when stopping.
  std::shared_ptr<PendingSearch> NextRunnable(int index, Queue& q)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(q.mu);
  // With only programs' misses queued: whether the device has been idle
  // long enough for one to run; else holds them and waits a poll. Asks
  // gpu_use without the lock.
  bool IdleLongEnough(int index, Queue& q) ABSL_EXCLUSIVE_LOCKS_REQUIRED(q.mu);
  // Holds every queued search of `q` back for programs.
  void HoldAll(int index, Queue& q) ABSL_EXCLUSIVE_LOCKS_REQUIRED(q.mu);
  // Holds `search` back for programs (counted once).
  void Hold(int index, PendingSearch& search);
  void WorkerLoop(int index);

  const Options options_;
  const std::vector<DeviceInfo> devices_;
  std::vector<std::unique_ptr<Queue>> queues_;
  RunSearch run_;
  std::atomic<int64_t> waited_for_idle_{0}, rejected_{0};
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_DEVICE_QUEUES_H_
