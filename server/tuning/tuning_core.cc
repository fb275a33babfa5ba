#include "server/tuning/tuning_core.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/driver_version.h"
#include "common/record_results.h"
#include "common/sealed_plan.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"

namespace tunedb {

// One search and the callers waiting for it.
struct TuningCore::Pending {
  explicit Pending(ValidKey k) : key(std::move(k)) {}
  const ValidKey key;
  int device_index = 0;
  bool force = false;           // search even if a record exists anywhere
  int revalidate_from = 0;      // TuneMode::revalidate_from_cudnn
  bool revalidate_older_driver = false;  // TuneMode's
  // It re-times the older driver's record stored here: asks the fleet
  // nothing (the fleet's record of the key may be that very one).
  bool retimes_stored = false;
  // A program's miss (SearchWhen::kWhenIdle): runs only while no program
  // uses the device. Guarded by the device worker's mu.
  bool when_idle = false;
  // Counted in waited_for_idle_ (Hold; under the device worker's mu).
  bool counted_waiting = false;
  // Not running soon: held back until the GPU is idle, or queued behind a
  // running search (set by Hold or MarkHeld, cleared when the worker takes
  // it or a kNow call joins it; read by callers waiting with
  // TuneMode::return_if_held).
  std::atomic<bool> held{false};
  bool fleet_resolved = false;  // the fleet was asked (worker thread only)
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  bool searched = false;  // a search ran here (else: from the fleet)
  bool waited_on_fleet = false;  // another host's search was waited for
  absl::StatusOr<std::shared_ptr<const Record>> result =
      absl::UnknownError("not run");
};

struct TuningCore::DeviceWorker {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::shared_ptr<Pending>> queue;
  bool running = false;  // a search is in progress
  bool stop = false;
  // Since when gpu_use has found the device idle without a break
  // (InfiniteFuture: in use at the last ask, or not asked yet).
  absl::Time idle_since = absl::InfiniteFuture();
  // The worker holds its kWhenIdle searches back (it last found the device
  // in use, or idle for less than idle_quiet): one queued now is held at
  // once.
  bool holding = false;
  absl::Time last_asked = absl::InfinitePast();  // gpu_use, by this worker
  std::thread thread;
};

namespace {

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

int64_t NowMicros() { return absl::ToUnixMicros(absl::Now()); }

// At most this many records of a problem under other cuDNN versions are
// read for a prediction.
constexpr int kOtherVersionsRead = 16;

}  // namespace

absl::StatusOr<std::unique_ptr<TuningCore>> TuningCore::Create(
    const Options& options, Store* store, Finder* finder, FleetSync* fleet) {
  if (options.queue_capacity < 1) {
    return absl::InvalidArgumentError("queue_capacity must be >= 1");
  }
  // A host whose GPUs cannot be listed still serves what is stored.
  std::vector<DeviceInfo> devices;
  absl::StatusOr<std::vector<DeviceInfo>> listed = finder->Devices();
  if (listed.ok()) {
    devices = std::move(*listed);
  } else {
    spdlog::warn(
        "finder '{}' lists no devices ({}); serving stored records "
        "only, Tune will fail",
        finder->Name(), listed.status().ToString());
  }
  if (devices.empty()) {
    spdlog::warn("no GPU to search on: Tune requests will be refused");
  }
  Options o = options;
  if (o.host.empty()) o.host = HostName();
  return std::unique_ptr<TuningCore>(
      new TuningCore(o, store, finder, fleet, std::move(devices)));
}

TuningCore::TuningCore(const Options& options, Store* store, Finder* finder,
                       FleetSync* fleet, std::vector<DeviceInfo> devices)
    : options_(options),
      store_(store),
      finder_(finder),
      fleet_(fleet),
      devices_(std::move(devices)),
      cache_(options.record_cache_capacity),
      families_(store, options.family_ttl, /*max_records=*/65536) {
  for (size_t i = 0; i < devices_.size(); ++i) {
    workers_.push_back(std::make_unique<DeviceWorker>());
  }
  for (size_t i = 0; i < devices_.size(); ++i) {
    workers_[i]->thread =
        std::thread([this, i] { WorkerLoop(static_cast<int>(i)); });
  }
  flusher_ = std::thread([this] { FlushLoop(); });
  if (fleet_ != nullptr) {
    fleet_waiter_ = std::thread([this] { FleetWaitLoop(); });
  }
}

TuningCore::~TuningCore() { Shutdown(absl::ZeroDuration()); }

void TuningCore::Shutdown(absl::Duration drain) {
  {
    absl::MutexLock lock(&served_mu_);
    if (stopping_ && !flusher_.joinable()) return;
    stopping_ = true;
  }
  flush_cv_.SignalAll();
  // Queued searches fail now; a running one gets until `drain`, and is then
  // bounded by the finder's own per-search timeout.
  for (auto& w : workers_) {
    std::deque<std::shared_ptr<Pending>> dropped;
    {
      std::lock_guard<std::mutex> lock(w->mu);
      w->stop = true;
      dropped.swap(w->queue);
    }
    w->cv.notify_all();
    for (auto& p : dropped) {
      {
        absl::MutexLock lock(&mu_);
        inflight_.erase(p->key.text());
      }
      std::lock_guard<std::mutex> lock(p->mu);
      p->result = absl::UnavailableError("tunedbd is shutting down");
      p->done = true;
      p->cv.notify_all();
    }
  }
  absl::Time until = absl::Now() + drain;
  for (size_t i = 0; i < workers_.size(); ++i) {
    if (QueueDepth(static_cast<int>(i)) > 0 && absl::Now() >= until) {
      spdlog::warn(
          "device {}: a search is still running after the drain "
          "deadline; waiting for its timeout",
          i);
    }
    if (workers_[i]->thread.joinable()) workers_[i]->thread.join();
  }
  if (flusher_.joinable()) flusher_.join();
  if (fleet_waiter_.joinable()) fleet_waiter_.join();
  std::vector<std::shared_ptr<Pending>> waiting;
  {
    absl::MutexLock lock(&served_mu_);
    waiting.swap(fleet_waiting_);
  }
  for (auto& p : waiting) {
    Complete(p, absl::UnavailableError("tunedbd is shutting down"), false);
  }
  FlushServed();
}

int TuningCore::QueueDepth(int index) const {
  if (index < 0 || index >= static_cast<int>(workers_.size())) return 0;
  DeviceWorker& w = *workers_[index];
  std::lock_guard<std::mutex> lock(w.mu);
  return static_cast<int>(w.queue.size()) + (w.running ? 1 : 0);
}

absl::StatusOr<int> TuningCore::PickDevice(
    const std::optional<DeviceKey>& device) {
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

bool TuningCore::InUse(int index) {
  return options_.gpu_use != nullptr &&
         options_.gpu_use->InUse(devices_[index]);
}

int TuningCore::LeastBusyIdle(const DeviceKey& key) {
  int best = -1;
  if (options_.gpu_use != nullptr) {
    for (size_t i = 0; i < devices_.size(); ++i) {
      const int index = static_cast<int>(i);
      if (devices_[i].key != key || Holding(index)) continue;
      if (InUse(index)) {
        // A program is there now: a quiet period on it starts again.
        DeviceWorker& w = *workers_[index];
        std::lock_guard<std::mutex> lock(w.mu);
        w.idle_since = absl::InfiniteFuture();
        continue;
      }
      if (best < 0 || QueueDepth(index) < QueueDepth(best)) best = index;
    }
  }
  return best >= 0 ? best : LeastBusy(key);
}

bool TuningCore::Holding(int index) {
  DeviceWorker& w = *workers_[index];
  std::lock_guard<std::mutex> lock(w.mu);
  return w.holding;
}

int TuningCore::LeastBusy(const DeviceKey& key) {
  int best = -1;
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (devices_[i].key != key) continue;
    if (best < 0 || QueueDepth(static_cast<int>(i)) < QueueDepth(best)) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

absl::StatusOr<std::shared_ptr<const Record>> TuningCore::Stored(
    const ValidKey& key) {
  std::shared_ptr<const Record> cached = cache_.Get(key.text());
  if (cached) return cached;
  absl::StatusOr<std::optional<Record>> record = store_->Get(key.key());
  if (absl::IsDataLoss(record.status())) {
    // A damaged row is a miss: Tune searches again and its Put replaces the
    // row; `tunedb repair` quarantines what is left.
    spdlog::warn("{}; answered as a miss",
                 std::string(record.status().message()));
    return nullptr;
  }
  RETURN_IF_ERROR(record.status());
  if (!*record) return nullptr;
  auto shared = std::make_shared<const Record>(std::move(**record));
  cache_.Put(key.text(), shared);
  return shared;
}

std::vector<AlgoResult> TuningCore::StoredPlans(const ValidKey& key,
                                                const Record& record) {
  std::vector<AlgoResult> plans;
  if (key.problem().api != ConvApi::kGraph) return plans;
  for (const AlgoResult& r : record.results) {
    if (r.plan.empty()) continue;
    AlgoResult p;
    p.algo = r.algo;
    p.knobs = r.knobs;
    p.plan = r.plan;
    p.build_ms = r.build_ms;  // what the search that loads it would not pay
    if (UnsealPlan(key.key(), p).ok()) plans.push_back(std::move(p));
  }
  return plans;
}

TuneAnswer TuningCore::Serve(std::shared_ptr<const Record> record,
                             const Constraints& constraints) {
  hits_.fetch_add(1, std::memory_order_relaxed);
  CountServed(record->id);
  TuneAnswer answer;
  answer.choice = Choose(*record, constraints);
  answer.record = std::move(record);
  return answer;
}

absl::StatusOr<TuneAnswer> TuningCore::Lookup(const ValidKey& key,
                                              const Constraints& constraints) {
  ASSIGN_OR_RETURN(std::shared_ptr<const Record> record, Stored(key));
  if (!record && fleet_ != nullptr) {
    std::optional<Record> found = fleet_->Fetch(key);
    if (found) record = KeepFleetRecord(*std::move(found));
  }
  if (!record) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    lookup_misses_.fetch_add(1, std::memory_order_relaxed);
    return absl::NotFoundError(
        absl::StrCat("no record for key ", key.HashText()));
  }
  lookup_hits_.fetch_add(1, std::memory_order_relaxed);
  return Serve(std::move(record), constraints);
}

absl::StatusOr<Prediction> TuningCore::Predict(const ValidKey& key,
                                               const Constraints& constraints,
                                               Predictors predictors) {
  // The same problem under another cuDNN version first (after an upgrade),
  // then the nearest shapes of this version.
  ASSIGN_OR_RETURN(const bool other_versions,
                   families_.MayHoldOtherVersions(key.key()));
  if (other_versions) {
    ASSIGN_OR_RETURN(std::vector<Record> others,
                     OtherVersions(key, /*with_plans=*/false));
    if (std::optional<Prediction> p =
            PredictFromOtherVersion(key.key(), others, constraints)) {
      predictions_.fetch_add(1, std::memory_order_relaxed);
      return *std::move(p);
    }
  }
  if (predictors == Predictors::kOtherVersions) {
    return absl::NotFoundError(
        absl::StrCat("no record for key ", key.HashText(),
                     " under this or another cuDNN version"));
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const FamilyCache::Records> family,
                   families_.Family(key.key()));
  std::optional<Prediction> p = PredictFrom(key.key(), *family, constraints,
                                            options_.predict_neighbours);
  if (!p) {
    return absl::NotFoundError(absl::StrCat(
        "no record for key ", key.HashText(),
        ", and no tuned problem of its family to predict from"));
  }
  if (p->distance > options_.predict_max_distance) {
    return absl::NotFoundError(absl::StrCat(
        "no record for key ", key.HashText(), ", and its family's nearest "
        "tuned shape is ", absl::SixDigits(p->distance), " away (more than ",
        absl::SixDigits(options_.predict_max_distance), " to predict from)"));
  }
  predictions_.fetch_add(1, std::memory_order_relaxed);
  return *std::move(p);
}

absl::StatusOr<TuneAnswer> TuningCore::Tune(
    const ConvProblem& problem, const std::optional<DeviceKey>& device,
    const Constraints& constraints, const TuneMode& mode, absl::Time deadline,
    const std::function<bool()>& cancelled) {
  const bool force = mode.force;
  const SearchWhen when = mode.when;
  ASSIGN_OR_RETURN(int index, PickDevice(device));
  RETURN_IF_ERROR(CheckRevalidatedFrom(mode.revalidate_from_cudnn,
                                       devices_[index].key.cudnn_version,
                                       "revalidate_from_cudnn"));
  RETURN_IF_ERROR(CheckRevalidateOlderDriver(mode));
  // The finder's device keys were validated when its workers reported them.
  const ValidKey key =
      ValidKey::FromValidated(ProblemKey{devices_[index].key, problem});
  // Whether the caller asks to revalidate `record`: measured under an older
  // driver than the device's. Such a record is not served as it is; nor is a
  // stale one (measured before launch timing: searched again).
  const std::string& driver = devices_[index].driver_version;
  auto older_driver = [&](const std::shared_ptr<const Record>& record) {
    return mode.revalidate_older_driver && record != nullptr &&
           DriverIsOlder(record->driver_version, driver);
  };
  auto answers = [&](const std::shared_ptr<const Record>& record) {
    return record && !record->stale() && !older_driver(record);
  };
  if (!force) {
    ASSIGN_OR_RETURN(std::shared_ptr<const Record> record, Stored(key));
    if (answers(record)) return Serve(std::move(record), constraints);
  }
  misses_.fetch_add(1, std::memory_order_relaxed);
  // A program's miss that starts a search asks which devices programs use,
  // before taking mu_ (NVML is not to be waited on under the core's lock);
  // one that joins a search (a client's retry) asks nothing.
  const bool when_idle =
      when == SearchWhen::kWhenIdle && options_.gpu_use != nullptr;
  int idle_index = -1;
  if (when_idle) {
    bool searching = false;
    {
      absl::MutexLock lock(&mu_);
      searching = inflight_.count(key.text()) > 0;
    }
    if (!searching) idle_index = LeastBusyIdle(key.device());
  }

  std::shared_ptr<Pending> pending;
  bool joined = false;  // this call waits for a search another call started
  {
    absl::MutexLock lock(&mu_);
    auto it = inflight_.find(key.text());
    if (it != inflight_.end()) {
      pending = it->second;
      joined = true;
      coalesced_.fetch_add(1, std::memory_order_relaxed);
      if (when == SearchWhen::kNow) {
        DeviceWorker& w = *workers_[pending->device_index];
        {
          std::lock_guard<std::mutex> wlock(w.mu);
          pending->when_idle = false;
          pending->held.store(false, std::memory_order_release);
        }
        w.cv.notify_one();
      }
    } else {
      std::shared_ptr<const Record> record;
      if (!force) {
        // A search may have finished between the store read above and
        // taking mu_ (it stores before leaving inflight_): look again.
        ASSIGN_OR_RETURN(record, Stored(key));
        if (answers(record)) {
          misses_.fetch_sub(1, std::memory_order_relaxed);
          return Serve(std::move(record), constraints);
        }
      }
      // Devices with one key share results: the least busy one searches
      // (for a program's miss, the least busy idle one).
      index = idle_index >= 0 ? idle_index : LeastBusy(key.device());
      pending = std::make_shared<Pending>(key);
      pending->device_index = index;
      pending->force = force;
      pending->revalidate_from = mode.revalidate_from_cudnn;
      pending->revalidate_older_driver = mode.revalidate_older_driver;
      // A key with nothing stored here asks the fleet first, as any miss.
      pending->retimes_stored = older_driver(record);
      pending->when_idle = when_idle;
      DeviceWorker& w = *workers_[index];
      {
        std::lock_guard<std::mutex> wlock(w.mu);
        if (w.stop) {
          return absl::UnavailableError("tunedbd is shutting down");
        }
        if (static_cast<int>(w.queue.size()) >= options_.queue_capacity) {
          rejected_.fetch_add(1, std::memory_order_relaxed);
          return absl::ResourceExhaustedError(
              absl::StrCat("device ", index, " has ", w.queue.size(),
                           " searches queued (capacity ",
                           options_.queue_capacity, "); retry later"));
        }
        w.queue.push_back(pending);
        // Where the worker holds the queue for programs, this miss is held
        // now, not at the worker's next ask; behind a running search, it
        // will not run soon either.
        if (when_idle && w.holding) {
          Hold(index, *pending);
        } else if (when_idle && w.running) {
          MarkHeld(*pending);
        }
      }
      w.cv.notify_one();
      inflight_[key.text()] = pending;
    }
  }

  std::unique_lock<std::mutex> lock(pending->mu);
  while (!pending->done) {
    if (mode.return_if_held &&
        pending->held.load(std::memory_order_acquire)) {
      TuneAnswer held;
      held.held = true;
      return held;
    }
    absl::Time wake = std::min(deadline, absl::Now() + absl::Milliseconds(50));
    pending->cv.wait_until(lock, absl::ToChronoTime(wake));
    if (pending->done) break;
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          "deadline passed while the search ran; its result will be stored "
          "for the next request");
    }
    if (cancelled && cancelled()) {
      return absl::CancelledError("the caller went away");
    }
  }
  if (!pending->result.ok()) return pending->result.status();
  TuneAnswer answer;
  answer.record = *pending->result;
  answer.choice = Choose(*answer.record, constraints);
  answer.searched = pending->searched && !joined;
  answer.waited_for_search =
      joined || (!pending->searched && pending->waited_on_fleet);
  return answer;
}

std::shared_ptr<TuningCore::Pending> TuningCore::NextRunnable(
    int index, DeviceWorker& w, std::unique_lock<std::mutex>& lock) {
  for (;;) {
    w.cv.wait(lock, [&] { return w.stop || !w.queue.empty(); });
    if (w.stop) return nullptr;
    auto it = std::find_if(w.queue.begin(), w.queue.end(),
                           [](const auto& p) { return !p->when_idle; });
    if (it == w.queue.end()) {
      // Only programs' misses are queued. Holding, and asked within
      // idle_poll (a new miss woke the worker): hold on without asking.
      const absl::Duration since_asked = absl::Now() - w.last_asked;
      if (w.holding && since_asked < options_.idle_poll) {
        for (const auto& p : w.queue) Hold(index, *p);
        w.cv.wait_for(lock, absl::ToChronoNanoseconds(options_.idle_poll -
                                                      since_asked));
        continue;
      }
      // Ask the GPU, without the lock.
      lock.unlock();
      const bool in_use = InUse(index);
      const absl::Time now = absl::Now();
      lock.lock();
      // Idle since an earlier ask counts only while the worker kept asking
      // (or searching): after a pause with nothing queued, a program may
      // have come and be between two bursts of GPU work now.
      const bool watched = now - w.last_asked <= 2 * options_.idle_poll;
      w.last_asked = now;
      if (w.stop || w.queue.empty()) continue;
      if (in_use) {
        w.idle_since = absl::InfiniteFuture();
      } else if (!watched || w.idle_since == absl::InfiniteFuture()) {
        w.idle_since = now;
      }
      const bool quiet = options_.gpu_use == nullptr ||
                         now - w.idle_since >= options_.idle_quiet;
      if (!quiet) {
        if (!w.holding) {
          spdlog::info("device {} {}: programs' misses wait until it has been "
                       "idle for {}",
                       index,
                       in_use ? "is in use by a program"
                              : "has not been seen idle that long yet",
                       absl::FormatDuration(options_.idle_quiet));
        }
        w.holding = true;
        for (const auto& p : w.queue) Hold(index, *p);
        w.cv.wait_for(lock, absl::ToChronoNanoseconds(options_.idle_poll));
        continue;
      }
      it = w.queue.begin();
    }
    w.holding = false;
    std::shared_ptr<Pending> pending = *it;
    w.queue.erase(it);
    pending->held.store(false, std::memory_order_release);
    return pending;
  }
}

void TuningCore::MarkHeld(Pending& p) {
  // Under p.mu, so that a caller between its check and its wait sees it.
  std::lock_guard<std::mutex> lock(p.mu);
  p.held.store(true, std::memory_order_release);
  p.cv.notify_all();
}

void TuningCore::Hold(int index, Pending& p) {
  if (p.counted_waiting) return;
  p.counted_waiting = true;
  MarkHeld(p);
  waited_for_idle_.fetch_add(1, std::memory_order_relaxed);
  spdlog::debug("device {} is held for programs: its miss {} waits until the "
                "GPU has been idle for {}",
                index, p.key.HashText(),
                absl::FormatDuration(options_.idle_quiet));
}

void TuningCore::WorkerLoop(int index) {
  DeviceWorker& w = *workers_[index];
  for (;;) {
    std::shared_ptr<Pending> pending;
    {
      std::unique_lock<std::mutex> lock(w.mu);
      pending = NextRunnable(index, w, lock);
      if (pending == nullptr) return;  // stopping
      w.running = true;
    }
    RunSearch(index, pending);
    {
      std::lock_guard<std::mutex> lock(w.mu);
      w.running = false;
      // The device was watched through the search (its own use is not a
      // program's): the quiet period goes on from here.
      w.last_asked = absl::Now();
    }
  }
}

void TuningCore::RunSearch(int index, const std::shared_ptr<Pending>& pending) {
  const DeviceInfo& device = devices_[index];
  // A forced search asks nobody: it searches here and publishes. So does a
  // revalidation of a record stored here after a driver upgrade (the
  // fleet's record of the key may be the very record it re-times).
  if (fleet_ != nullptr && !pending->fleet_resolved && !pending->force &&
      !pending->retimes_stored) {
    pending->fleet_resolved = true;
    FleetSync::Resolution fleet = fleet_->Resolve(pending->key);
    if (fleet.outcome == FleetSync::Outcome::kFound) {
      std::shared_ptr<const Record> kept =
          KeepFleetRecord(*std::move(fleet.record));
      // Asked to revalidate an older driver's record, the fleet's (now
      // stored here) is re-timed below; any other answers as it is.
      if (!pending->revalidate_older_driver ||
          !DriverIsOlder(kept->driver_version, device.driver_version)) {
        Complete(pending, std::move(kept), false);
        return;
      }
    }
    if (fleet.outcome == FleetSync::Outcome::kHeld) {
      // Another host searches it: the fleet thread waits for its result, and
      // this device takes the next search meanwhile.
      absl::MutexLock lock(&served_mu_);
      pending->waited_on_fleet = true;
      fleet_waiting_.push_back(pending);
      return;
    }
  }
  absl::Time start = absl::Now();
  Provenance provenance;
  absl::StatusOr<SearchResult> found = Search(index, *pending, &provenance);
  double ms = absl::ToDoubleMilliseconds(absl::Now() - start);
  absl::StatusOr<std::shared_ptr<const Record>> result;
  if (!found.ok()) {
    failures_.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("search on device {} failed: {} (key {})", index,
                 found.status().ToString(), pending->key.HashText());
    result = absl::Status(
        found.status().code(),
        absl::StrCat("search on device ", index, " (", device.key.gpu_model,
                     ") failed: ", found.status().message()));
  } else {
    search_us_total_.fetch_add(static_cast<int64_t>(ms * 1000),
                               std::memory_order_relaxed);
    Record record;
    record.key = pending->key.key();
    record.results = std::move(found->results);
    SortResults(record.results);
    SealPlans(record.key, record.results);
    record.measured_at_us = NowMicros();
    record.host = options_.host;
    record.gpu_uuid = device.uuid;
    record.driver_version = device.driver_version;
    record.finder = finder_->Name();
    record.repeats = found->repeats;
    record.workspace_cap_bytes = found->workspace_cap_bytes;
    record.search_ms = ms;
    record.verified = found->verified;
    record.timing_version = TimingVersionOf(record.results);
    record.revalidated_from_cudnn = provenance.from_cudnn;
    record.revalidated_from_driver = provenance.from_driver;
    absl::StatusOr<int64_t> id =
        fleet_ != nullptr ? store_->PutForFleet(record) : store_->Put(record);
    if (!id.ok()) {
      // A search whose result could not be stored failed (a full disk must
      // not look like success in Stats).
      failures_.fetch_add(1, std::memory_order_relaxed);
      spdlog::error("storing a search result failed: {}",
                    id.status().ToString());
      result = absl::Status(
          id.status().code(),
          absl::StrCat("the search ran but its result could not be stored: ",
                       id.status().message()));
    } else {
      searches_.fetch_add(1, std::memory_order_relaxed);
      last_write_us_.store(NowMicros(), std::memory_order_relaxed);
      if (fleet_ != nullptr) fleet_->Wake();
      record.id = *id;
      auto stored = std::make_shared<const Record>(std::move(record));
      cache_.Put(pending->key.text(), stored);
      families_.Forget(pending->key.key());
      const SearchPhases& p = found->phases;
      spdlog::info(
          "searched {} on device {} in {:.1f} ms ({} algorithms; setup {:.0f}, "
          "find {:.0f} (heuristics {:.0f}), screen {:.0f}, retime {:.0f}, "
          "verify {:.0f} ms; {} stored plans loaded)",
          pending->key.HashText(), index, ms, stored->results.size(),
          p.setup_ms, p.find_ms, p.heuristics_ms, p.screen_ms, p.retime_ms,
          p.verify_ms, p.plans_loaded);
      result = std::move(stored);
    }
  }
  if (options_.on_search) {
    SearchEvent event;
    event.device_index = index;
    event.ok = result.ok();
    event.total_ms = ms;
    if (found.ok()) event.phases = found->phases;
    options_.on_search(event);
  }
  if (!result.ok() && fleet_ != nullptr) fleet_->SearchFailed(pending->key);
  Complete(pending, std::move(result), true);
}

absl::StatusOr<std::vector<Record>> TuningCore::OtherVersions(
    const ValidKey& key, bool with_plans) {
  std::vector<Record> others;
  RecordFilter filter = OtherVersionsFilter(key.key());
  filter.without_plans = !with_plans;
  RETURN_IF_ERROR(store_->Query(filter, 0,
                                kOtherVersionsRead, [&](const Record& r) {
                                  others.push_back(r);
                                  return true;
                                }));
  return others;
}

std::optional<Record> TuningCore::RevalidationSourceOf(const ValidKey& key,
                                                       int from) {
  absl::StatusOr<std::vector<Record>> others =
      OtherVersions(key, /*with_plans=*/true);
  if (!others.ok()) {
    spdlog::warn("revalidating {}: its records of other versions cannot be "
                 "read here ({})",
                 key.HashText(), others.status().ToString());
  } else if (const Record* source =
                 RevalidationSource(key.key(), from, *others)) {
    return *source;
  }
  // A fleet host that never held the old version's records: the fleet's
  // record of the same problem under it (same CUDA runtime), if any.
  if (fleet_ == nullptr) return std::nullopt;
  ProblemKey old = key.key();
  old.device.cudnn_version = from;
  absl::StatusOr<ValidKey> old_key = ValidKey::Make(old);
  if (!old_key.ok()) return std::nullopt;
  return fleet_->Fetch(*old_key);
}

absl::StatusOr<std::optional<SearchResult>> TuningCore::Revalidate(
    int index, const ValidKey& key, const Record* source,
    const std::string& from, SearchOptions search) {
  if (source != nullptr) search.retime_only = RevalidationCandidates(*source);
  if (search.retime_only.empty()) {
    revalidation_full_searches_.fetch_add(1, std::memory_order_relaxed);
    spdlog::info("revalidating {} from {}: nothing that ran is stored under "
                 "it; searching in full",
                 key.HashText(), from);
    return std::nullopt;
  }
  ASSIGN_OR_RETURN(SearchResult found,
                   finder_->Search(index, key.problem(), search));
  const RevalidationVerdict verdict = JudgeRevalidation(*source, found.results);
  if (verdict.outcome != RevalidationVerdict::Outcome::kFullSearch) {
    revalidated_.fetch_add(1, std::memory_order_relaxed);
    return found;
  }
  revalidation_full_searches_.fetch_add(1, std::memory_order_relaxed);
  spdlog::info("revalidating {} from {}: {}; searching in full",
               key.HashText(), from, verdict.why);
  return std::nullopt;
}

absl::StatusOr<SearchResult> TuningCore::Search(int index,
                                                const Pending& pending,
                                                Provenance* provenance) {
  const SearchOptions& options = options_.search;
  *provenance = Provenance();
  if (pending.revalidate_from != 0) {
    std::optional<Record> source =
        RevalidationSourceOf(pending.key, pending.revalidate_from);
    ASSIGN_OR_RETURN(
        std::optional<SearchResult> retimed,
        Revalidate(index, pending.key, source ? &*source : nullptr,
                   absl::StrCat("cuDNN ", pending.revalidate_from), options));
    if (retimed) {
      provenance->from_cudnn = pending.revalidate_from;
      return *std::move(retimed);
    }
  }
  const std::string& driver = devices_[index].driver_version;
  absl::StatusOr<std::shared_ptr<const Record>> stored = Stored(pending.key);
  std::shared_ptr<const Record> record = stored.ok() ? *stored : nullptr;
  if (pending.revalidate_older_driver && record != nullptr &&
      DriverIsOlder(record->driver_version, driver)) {
    // A stale record's times are not re-timed: searched in full, as any.
    if (!record->stale()) {
      ASSIGN_OR_RETURN(
          std::optional<SearchResult> retimed,
          Revalidate(index, pending.key, record.get(),
                     absl::StrCat("driver ", record->driver_version),
                     options));
      if (retimed) {
        provenance->from_driver = record->driver_version;
        return *std::move(retimed);
      }
    }
    // The full search makes the old driver's plans again: none handed on.
    record = nullptr;
  }
  SearchOptions search = options;
  if (record != nullptr) {
    search.stored_plans = StoredPlans(pending.key, *record);
    // Under another driver the stored timings may not hold.
    if (record->driver_version == driver) {
      search.far_behind = FarBehind(*record, options_.far_behind_factor,
                                    search.first_choices);
    }
  }
  absl::StatusOr<SearchResult> found =
      finder_->Search(index, pending.key.problem(), search);
  if (found.ok()) {
    CarryFarBehind(search.far_behind, found->workspace_cap_bytes,
                   found->results);
  }
  return found;
}

void TuningCore::Complete(const std::shared_ptr<Pending>& pending,
                          absl::StatusOr<std::shared_ptr<const Record>> result,
                          bool searched) {
  {
    absl::MutexLock lock(&mu_);
    inflight_.erase(pending->key.text());
  }
  std::lock_guard<std::mutex> lock(pending->mu);
  pending->result = std::move(result);
  pending->searched = searched;
  pending->done = true;
  pending->cv.notify_all();
}

absl::StatusOr<std::shared_ptr<const Record>> TuningCore::KeepRecord(
    Record record) {
  ASSIGN_OR_RETURN(const ValidKey key, ValidKey::Make(record.key));
  record.served_count = 0;
  ASSIGN_OR_RETURN(record.id, store_->Put(record));
  last_write_us_.store(NowMicros(), std::memory_order_relaxed);
  auto stored = std::make_shared<const Record>(std::move(record));
  cache_.Put(key.text(), stored);
  families_.Forget(key.key());
  return stored;
}

std::shared_ptr<const Record> TuningCore::KeepFleetRecord(Record record) {
  absl::StatusOr<std::shared_ptr<const Record>> kept = KeepRecord(record);
  if (kept.ok()) return *std::move(kept);
  // Served all the same; the next miss asks the fleet again.
  spdlog::warn("storing a fleet record locally failed: {}",
               kept.status().ToString());
  record.served_count = 0;
  return std::make_shared<const Record>(std::move(record));
}

bool TuningCore::Requeue(const std::shared_ptr<Pending>& pending) {
  DeviceWorker& w = *workers_[pending->device_index];
  {
    std::lock_guard<std::mutex> lock(w.mu);
    if (w.stop) return false;
    w.queue.push_back(pending);
  }
  w.cv.notify_one();
  return true;
}

void TuningCore::FleetWaitLoop() {
  served_mu_.Lock();
  while (!stopping_) {
    flush_cv_.WaitWithTimeout(&served_mu_, fleet_->options().poll);
    if (stopping_) break;
    std::vector<std::shared_ptr<Pending>> waiting;
    waiting.swap(fleet_waiting_);
    served_mu_.Unlock();
    std::vector<std::shared_ptr<Pending>> still;
    for (auto& pending : waiting) {
      FleetSync::Resolution fleet = fleet_->Poll(pending->key);
      switch (fleet.outcome) {
        case FleetSync::Outcome::kFound:
          Complete(pending,
                   KeepFleetRecord(*std::move(fleet.record)),
                   false);
          break;
        case FleetSync::Outcome::kHeld:
          still.push_back(pending);
          break;
        case FleetSync::Outcome::kClaimed:
        case FleetSync::Outcome::kUnavailable:
          // Ours now (the other host's lease expired), or the fleet cannot
          // be asked: search here.
          if (!Requeue(pending)) {
            Complete(pending, absl::UnavailableError("tunedbd is shutting down"),
                     false);
          }
          break;
      }
    }
    served_mu_.Lock();
    fleet_waiting_.insert(fleet_waiting_.end(), still.begin(), still.end());
  }
  served_mu_.Unlock();
}

void TuningCore::CountServed(int64_t id) {
  absl::MutexLock lock(&served_mu_);
  ++served_[id];
}

void TuningCore::FlushLoop() {
  served_mu_.Lock();
  while (!stopping_) {
    flush_cv_.WaitWithTimeout(&served_mu_, options_.flush_interval);
    if (stopping_) break;
    served_mu_.Unlock();
    FlushServed();
    served_mu_.Lock();
  }
  served_mu_.Unlock();
}

void TuningCore::FlushServed() {
  std::map<int64_t, int64_t> batch;
  {
    absl::MutexLock lock(&served_mu_);
    batch.swap(served_);
  }
  if (batch.empty()) return;
  std::vector<std::pair<int64_t, int64_t>> counts(batch.begin(), batch.end());
  absl::Status s = store_->AddServed(counts);
  if (!s.ok()) spdlog::warn("flushing served counts failed: {}", s.ToString());
}

absl::StatusOr<int64_t> TuningCore::Invalidate(const RecordFilter& filter) {
  absl::StatusOr<int64_t> deleted = store_->Delete(filter);
  if (deleted.ok())
    last_write_us_.store(NowMicros(), std::memory_order_relaxed);
  cache_.Clear();
  families_.Clear();
  return deleted;
}

absl::StatusOr<std::unique_ptr<Store::StagedImport>> TuningCore::BeginImport() {
  return store_->BeginImport();
}

absl::StatusOr<int64_t> TuningCore::CommitImport(Store::StagedImport& import,
                                                 const ImportTag& tag) {
  absl::StatusOr<int64_t> stored = import.Commit(tag);
  if (stored.ok()) last_write_us_.store(NowMicros(), std::memory_order_relaxed);
  cache_.Clear();
  families_.Clear();
  return stored;
}

CoreStats TuningCore::Stats() {
  CoreStats s;
  absl::StatusOr<int64_t> records = store_->Count();
  s.records = records.ok() ? *records : -1;
  s.hits = hits_.load();
  s.misses = misses_.load();
  s.lookup_hits = lookup_hits_.load();
  s.predictions = predictions_.load();
  s.lookup_misses = lookup_misses_.load();
  s.last_write_us = last_write_us_.load();
  s.searches = searches_.load();
  s.search_failures = failures_.load();
  s.coalesced = coalesced_.load();
  s.waited_for_idle = waited_for_idle_.load();
  s.revalidated = revalidated_.load();
  s.revalidation_full_searches = revalidation_full_searches_.load();
  s.rejected = rejected_.load();
  s.search_ms_total = search_us_total_.load() / 1000.0;
  for (size_t i = 0; i < devices_.size(); ++i) {
    s.queue_depths[static_cast<int>(i)] = QueueDepth(static_cast<int>(i));
  }
  s.database_bytes = store_->SizeBytes();
  s.finder = finder_->Name();
  s.database_path = store_->path();
  if (fleet_ != nullptr) s.fleet = fleet_->Health();
  s.reported = reported_.Get();
  return s;
}

}  // namespace tunedb
