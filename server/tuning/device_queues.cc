#include "server/tuning/device_queues.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "spdlog/spdlog.h"

namespace tunedb {

DeviceQueues::DeviceQueues(const Options& options,
                           std::vector<DeviceInfo> devices)
    : options_(options), devices_(std::move(devices)) {
  for (size_t i = 0; i < devices_.size(); ++i) {
    queues_.push_back(std::make_unique<Queue>());
  }
}

DeviceQueues::~DeviceQueues() {
  Stop();
  Join(absl::Now());
}

void DeviceQueues::Start(RunSearch run) {
  run_ = std::move(run);
  for (size_t i = 0; i < queues_.size(); ++i) {
    queues_[i]->thread =
        std::thread([this, i] { WorkerLoop(static_cast<int>(i)); });
  }
}

absl::StatusOr<int> DeviceQueues::PickDevice(
    const std::optional<DeviceKey>& device) const {
  if (devices_.empty()) {
    return absl::FailedPreconditionError(
        "this tunedbd has no GPU to search on (its finder found none)");
  }
  int best = device ? LeastBusy(*device) : 0;
  if (best < 0) {
    std::vector<std::string> served;
    for (const auto& d : devices_) served.push_back(d.key.ToText());
    return absl::FailedPreconditionError(
        absl::StrCat("this host serves no GPU matching [", device->ToText(),
                     "]; it serves: [", absl::StrJoin(served, "], ["), "]"));
  }
  return best;
}

int DeviceQueues::LeastBusy(const DeviceKey& key) const {
  int best = -1;
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (devices_[i].key != key) continue;
    if (best < 0 || QueueDepth(static_cast<int>(i)) < QueueDepth(best)) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

int DeviceQueues::LeastBusyIdle(const DeviceKey& key) {
  int best = -1;
  if (options_.gpu_use != nullptr) {
    for (size_t i = 0; i < devices_.size(); ++i) {
      const int index = static_cast<int>(i);
      if (devices_[i].key != key || Holding(index)) continue;
      if (InUse(index)) {
        // A program is there now: a quiet period on it starts again.
        Queue& q = *queues_[index];
        absl::MutexLock lock(&q.mu);
        q.idle_since = absl::InfiniteFuture();
        continue;
      }
      if (best < 0 || QueueDepth(index) < QueueDepth(best)) best = index;
    }
  }
  return best >= 0 ? best : LeastBusy(key);
}

int DeviceQueues::QueueDepth(int index) const {
  if (index < 0 || index >= static_cast<int>(queues_.size())) return 0;
  const Queue& q = *queues_[index];
  absl::MutexLock lock(&q.mu);
  return static_cast<int>(q.queue.size()) + (q.running ? 1 : 0);
}

bool DeviceQueues::InUse(int index) const {
  return options_.gpu_use != nullptr &&
         options_.gpu_use->InUse(devices_[index]);
}

bool DeviceQueues::Holding(int index) const {
  const Queue& q = *queues_[index];
  absl::MutexLock lock(&q.mu);
  return q.holding;
}

absl::Status DeviceQueues::Enqueue(
    const std::shared_ptr<PendingSearch>& search) {
  const int index = search->device_index();
  const bool when_idle = search->when_idle();
  Queue& q = *queues_[index];
  {
    absl::MutexLock lock(&q.mu);
    if (q.stop) return absl::UnavailableError("tunedbd is shutting down");
    if (static_cast<int>(q.queue.size()) >= options_.queue_capacity) {
      rejected_.fetch_add(1, std::memory_order_relaxed);
      return absl::ResourceExhaustedError(
          absl::StrCat("device ", index, " has ", q.queue.size(),
                       " searches queued (capacity ", options_.queue_capacity,
                       "); retry later"));
    }
    q.queue.push_back(search);
    // Where the worker holds the queue for programs, this miss is held now,
    // not at the worker's next ask; behind a running search, it will not
    // run soon either.
    if (when_idle && q.holding) {
      Hold(index, *search);
    } else if (when_idle && q.running) {
      search->MarkHeld();
    }
  }
  q.cv.Signal();
  return absl::OkStatus();
}

bool DeviceQueues::Requeue(const std::shared_ptr<PendingSearch>& search) {
  Queue& q = *queues_[search->device_index()];
  {
    absl::MutexLock lock(&q.mu);
    if (q.stop) return false;
    q.queue.push_back(search);
  }
  q.cv.Signal();
  return true;
}

void DeviceQueues::RunNow(PendingSearch& search) {
  Queue& q = *queues_[search.device_index()];
  {
    absl::MutexLock lock(&q.mu);
    search.RunNow();
  }
  q.cv.Signal();
}

std::vector<std::shared_ptr<PendingSearch>> DeviceQueues::Stop() {
  std::vector<std::shared_ptr<PendingSearch>> dropped;
  for (auto& q : queues_) {
    {
      absl::MutexLock lock(&q->mu);
      q->stop = true;
      dropped.insert(dropped.end(), q->queue.begin(), q->queue.end());
      q->queue.clear();
    }
    q->cv.SignalAll();
  }
  return dropped;
}

void DeviceQueues::Join(absl::Time drain) {
  for (size_t i = 0; i < queues_.size(); ++i) {
    if (QueueDepth(static_cast<int>(i)) > 0 && absl::Now() >= drain) {
      spdlog::warn(
          "device {}: a search is still running after the drain "
          "deadline; waiting for its timeout",
          i);
    }
    if (queues_[i]->thread.joinable()) queues_[i]->thread.join();
  }
}

void DeviceQueues::Hold(int index, PendingSearch& search) {
  if (!search.HoldForPrograms()) return;
  waited_for_idle_.fetch_add(1, std::memory_order_relaxed);
  spdlog::debug("device {} is held for programs: its miss {} waits until the "
                "GPU has been idle for {}",
                index, search.key().HashText(),
                absl::FormatDuration(options_.idle_quiet));
}

void DeviceQueues::HoldAll(int index, Queue& q) {
  for (const auto& p : q.queue) Hold(index, *p);
}

std::shared_ptr<PendingSearch> DeviceQueues::NextRunnable(int index,
                                                          Queue& q) {
  for (;;) {
    while (!q.stop && q.queue.empty()) q.cv.Wait(&q.mu);
    if (q.stop) return nullptr;
    auto it = std::find_if(q.queue.begin(), q.queue.end(),
                           [](const auto& p) { return !p->when_idle(); });
    if (it == q.queue.end()) {
      // Only programs' misses are queued.
      if (!IdleLongEnough(index, q)) continue;
      it = q.queue.begin();
    }
    q.holding = false;
    std::shared_ptr<PendingSearch> search = *it;
    q.queue.erase(it);
    search->Taken();
    return search;
  }
}

bool DeviceQueues::IdleLongEnough(int index, Queue& q) {
  // Holding, and asked within idle_poll (a new miss woke the worker): hold
  // on without asking.
  const absl::Duration since_asked = absl::Now() - q.last_asked;
  if (q.holding && since_asked < options_.idle_poll) {
    HoldAll(index, q);
    q.cv.WaitWithTimeout(&q.mu, options_.idle_poll - since_asked);
    return false;
  }
  // Ask the GPU, without the lock.
  q.mu.Unlock();
  const bool in_use = InUse(index);
  const absl::Time now = absl::Now();
  q.mu.Lock();
  // Idle since an earlier ask counts only while the worker kept asking (or
  // searching): after a pause with nothing queued, a program may have come
  // and be between two bursts of GPU work now.
  const bool watched = now - q.last_asked <= 2 * options_.idle_poll;
  q.last_asked = now;
  if (q.stop || q.queue.empty()) return false;
  if (in_use) {
    q.idle_since = absl::InfiniteFuture();
  } else if (!watched || q.idle_since == absl::InfiniteFuture()) {
    q.idle_since = now;
  }
  const bool quiet = options_.gpu_use == nullptr ||
                     now - q.idle_since >= options_.idle_quiet;
  if (quiet) return true;
  if (!q.holding) {
    spdlog::info("device {} {}: programs' misses wait until it has been idle "
                 "for {}",
                 index,
                 in_use ? "is in use by a program"
                        : "has not been seen idle that long yet",
                 absl::FormatDuration(options_.idle_quiet));
  }
  q.holding = true;
  HoldAll(index, q);
  q.cv.WaitWithTimeout(&q.mu, options_.idle_poll);
  return false;
}

void DeviceQueues::WorkerLoop(int index) {
  Queue& q = *queues_[index];
  for (;;) {
    std::shared_ptr<PendingSearch> search;
    {
      absl::MutexLock lock(&q.mu);
      search = NextRunnable(index, q);
      if (search == nullptr) return;  // stopping
      q.running = true;
    }
    run_(index, search);
    {
      absl::MutexLock lock(&q.mu);
      q.running = false;
      // The device was watched through the search (its own use is not a
      // program's): the quiet period goes on from here.
      q.last_asked = absl::Now();
    }
  }
}

}  // namespace tunedb
