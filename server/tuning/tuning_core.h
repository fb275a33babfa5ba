// TuningCore: the daemon's logic, independent of gRPC.
//
// Lookup answers from the store. Tune answers from the store or queues a
// search on a GPU of the requested model; identical concurrent Tunes are
// coalesced into one search. Each device has one worker thread and a bounded
// queue (RESOURCE_EXHAUSTED when full). A caller whose deadline passes gets
// DEADLINE_EXCEEDED; the search it started still completes and is stored, so
// it never wedges the queue. A failed search fails the requests waiting on
// it, nothing else.
//
// Keys and problems come in validated (the service validates the wire
// input); the core computes a key's text once per request (ValidKey) and
// does not validate again.
//
// With a FleetSync (docs/fleet.md), a local miss asks the fleet database
// before searching: a record found there is stored locally and served; a key
// another host is searching waits for that host's result (polled on the
// core's fleet thread, bounded by each caller's deadline) or for its lease to
// expire; a search result is stored with its outbox entry in one transaction
// and published by the FleetSync's drainer. The Lookup hit path never asks
// the fleet.
//
// A search that a program's miss caused (SearchWhen::kWhenIdle) does not
// compete with programs for their GPU: with Options::gpu_use set, it goes
// to an idle device of the key's model, else waits in its device's queue,
// passed by every other search, until that device has been idle for
// Options::idle_quiet. A caller asking with TuneMode::return_if_held is
// answered at once (TuneAnswer::held) once its search is held so.
//
// Thread safety: every public method is thread-safe.
#ifndef TUNEDB_SERVER_TUNING_TUNING_CORE_H_
#define TUNEDB_SERVER_TUNING_TUNING_CORE_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/valid_key.h"
#include "server/finder/finder.h"
#include "server/tuning/fleet_sync.h"
#include "server/tuning/family_cache.h"
#include "server/tuning/gpu_use.h"
#include "server/tuning/record_cache.h"
#include "server/tuning/shape_predictor.h"
#include "server/tuning/version_predictor.h"
#include "server/tuning/reported_counters.h"
#include "server/tuning/revalidation.h"
#include "server/tuning/search_again.h"
#include "store/store.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

// When a Tune's search may run.
enum class SearchWhen {
  kNow,       // as soon as its device's queue reaches it
  kWhenIdle,  // a program's miss: only while no other program uses the GPU
};

// How a Tune searches where it must.
struct TuneMode {
  // Search even if a record exists. Default: no.
  bool force = false;
  SearchWhen when = SearchWhen::kNow;
  // A revalidation (revalidation.h): re-time the choices stored for the
  // problem under this other cuDNN version (cuDNN's encoding, e.g. 91400)
  // instead of searching in full, where they decide; a full search where
  // they do not, or where nothing is stored for it. 0: a full search.
  int revalidate_from_cudnn = 0;
  // A revalidation after a driver upgrade (revalidation.h): where the key's
  // stored record was measured under an older driver than the serving
  // device's (DriverIsOlder, common/driver_version.h), re-time its choices
  // instead of serving it, and store the result as the key's record
  // (Record::revalidated_from_driver); a full search where they do not
  // decide. A record under the same or a newer driver, or whose driver text
  // cannot be read, is served as stored; a key with nothing stored is an
  // ordinary miss (asked of the fleet, if any, whose older driver's record
  // is re-timed; else searched in full). Not
  // with force or revalidate_from_cudnn (CheckRevalidateOlderDriver).
  // Default: no.
  bool revalidate_older_driver = false;
  // With kWhenIdle: answer at once (TuneAnswer::held) once the search is
  // held back until the GPU is idle, instead of waiting for it up to the
  // deadline; it still runs and is stored. A program then asks its other
  // misses without waiting seconds for each. Default: no.
  bool return_if_held = false;
};

// INVALID_ARGUMENT naming revalidate_older_driver where `mode` sets it with
// force or revalidate_from_cudnn (it re-times the key's own record, which
// they do not); OK otherwise. The one copy of the rule: Tune checks it, and
// so does the service's validation of a request (inline: that library does
// not link the core).
inline absl::Status CheckRevalidateOlderDriver(const TuneMode& mode) {
  if (mode.revalidate_older_driver &&
      (mode.force || mode.revalidate_from_cudnn != 0)) {
    return absl::InvalidArgumentError(
        "revalidate_older_driver: not with force or revalidate_from_cudnn "
        "(it re-times the key's own record, which they do not)");
  }
  return absl::OkStatus();
}

// Which predictors TuningCore::Predict may answer from.
enum class Predictors {
  // The same problem under another cuDNN version of the GPU model only (an
  // upgrade not yet revalidated).
  kOtherVersions,
  // That, else the nearest tuned problems of the key's family.
  kAll,
};

struct TuneAnswer {
  // Never null, but for a held answer. Shared with the daemon's record cache
  // and with every caller of a coalesced search, so answering copies no
  // ranking.
  std::shared_ptr<const Record> record;
  // TuneMode::return_if_held: the search waits for an idle GPU; no record
  // or choice yet.
  bool held = false;
  std::optional<AlgoResult> choice;  // nullopt: nothing meets the constraints
  // This call ran the search behind the answer.
  bool searched = false;
  // This call waited for a search that another call started: here (joined
  // while in flight) or on another host of the fleet.
  bool waited_for_search = false;
};

// One finished search, as TuningCore::Options::on_search sees it.
struct SearchEvent {
  int device_index = 0;
  bool ok = false;      // searched and stored
  double total_ms = 0;  // wall time of Finder::Search
  SearchPhases phases;  // zeros where the finder does not fill them
};

struct CoreStats {
  int64_t records = 0;
  int64_t hits = 0;           // Lookups and Tunes answered from the store
  int64_t misses = 0;         // Lookups and Tunes that found nothing usable
  int64_t lookup_hits = 0;    // the Lookup part of `hits`
  int64_t lookup_misses = 0;  // the Lookup part of `misses`
  int64_t predictions = 0;    // misses answered with a prediction
  int64_t searches = 0;
  int64_t search_failures = 0;
  // Searches of misses that waited for their GPU to be idle (kWhenIdle).
  int64_t waited_for_idle = 0;
  // Revalidations that stood (kept or changed), and those that needed a
  // full search (revalidation.h).
  int64_t revalidated = 0;
  int64_t revalidation_full_searches = 0;
  int64_t coalesced = 0;
  int64_t rejected = 0;
  double search_ms_total = 0;
  std::map<int, int> queue_depths;  // device index -> waiting + running
  int64_t database_bytes = 0;
  // When a search result or an import was last stored (Unix µs); 0: not
  // since this core started.
  int64_t last_write_us = 0;
  std::string finder;
  std::string database_path;
  FleetHealth fleet;  // enabled == false without a fleet database
  ReportedCounters::Snapshot reported;  // what clients reported
};

class TuningCore {
 public:
  struct Options {
    // Searches waiting per device before RESOURCE_EXHAUSTED. Default 1024.
    int queue_capacity = 1024;
    // Finder options for each search (workspace cap, per-search timeout).
    SearchOptions search;
    // Host name stored with each record; "" = gethostname().
    std::string host;
    // How often served counts are flushed to the store. Default 2 s.
    absl::Duration flush_interval = absl::Seconds(2);
    // Records kept in memory for Lookup and Tune (0: none). Default 65536.
    size_t record_cache_capacity = 65536;
    // Predict (shape_predictor.h): how many nearest tuned problems vote.
    // Default 3.
    int predict_neighbours = 3;
    // Predict answers from the nearest shapes only where the nearest tuned
    // one is at most this far (ShapeDistance); farther, the key is a miss.
    // On the H200's records of eight models, the vote beat cuDNN's
    // heuristic up to 1 and lost beyond (docs/graph-api.md, "Keys never
    // tuned"). Default 1.
    double predict_max_distance = 1.0;
    // How long a family read from the store for Predict is reused before it
    // is read again (a search of the family drops it at once). Default 5 s.
    absl::Duration family_ttl = absl::Seconds(5);
    // Called after every search on the device's worker thread (metrics);
    // must not block. Default: none.
    std::function<void(const SearchEvent&)> on_search;
    // Tells whether a program uses a device, for SearchWhen::kWhenIdle
    // searches; must outlive the core. Default null: every search runs as
    // kNow.
    GpuUse* gpu_use = nullptr;
    // How often a device whose queue holds only kWhenIdle searches asks
    // gpu_use again while the GPU is in use. Default 1 s.
    absl::Duration idle_poll = absl::Seconds(1);
    // How long gpu_use must have found a device idle, without a break,
    // before a kWhenIdle search starts on it: a program between two bursts
    // of GPU work (building the plans of a new input size, loading data)
    // does not count as gone. Default 3 s.
    absl::Duration idle_quiet = absl::Seconds(3);
    // A search again of a stored graph-API key does not run the configs its
    // record has this many times behind the leader (search_again.h); 0 runs
    // every config. Default kFarBehindFactor.
    double far_behind_factor = kFarBehindFactor;
  };

  // Takes the finder's device list at construction; `store`, `finder` and
  // `fleet` (null: no fleet database) must outlive the core.
  static absl::StatusOr<std::unique_ptr<TuningCore>> Create(
      const Options& options, Store* store, Finder* finder,
      FleetSync* fleet = nullptr);
  ~TuningCore();

  // Store only: NOT_FOUND if nothing is stored. A stale record (measured
  // before launch timing) is still served.
  absl::StatusOr<TuneAnswer> Lookup(const ValidKey& key,
                                    const Constraints& constraints);

  // For a key with no record: a prediction under `constraints` from the
  // same problem tuned under another cuDNN version of this GPU model
  // (version_predictor.h), else, with Predictors::kAll, from the nearest
  // tuned problems of its family (shape_predictor.h). NOT_FOUND when none
  // has an answer. Counted in Stats().predictions.
  absl::StatusOr<Prediction> Predict(const ValidKey& key,
                                     const Constraints& constraints,
                                     Predictors predictors = Predictors::kAll);

  // Store, else search as `mode` says; a stale record is searched again, as
  // with mode.force. `problem` and `device` have passed Validate(). `device`
  // nullopt means the first device. `deadline` bounds the wait
  // (absl::InfiniteFuture() for none); `cancelled`, if set, is polled so a
  // caller that goes away stops waiting. A kNow Tune that joins a kWhenIdle
  // search makes it kNow; a Tune that joins a search runs none of its own
  // (a revalidation joining a full search gets the full search).
  // INVALID_ARGUMENT for a revalidation from the device's own version, and
  // for revalidate_older_driver with force or revalidate_from_cudnn. A
  // revalidate_older_driver search of an older driver's record asks the
  // fleet nothing (the fleet's record of the key may be the old driver's):
  // it searches here, as a forced search does, and publishes; one of a key
  // with nothing stored here asks the fleet first, as any miss, and
  // re-times the fleet's record where it is an older driver's.
  absl::StatusOr<TuneAnswer> Tune(const ConvProblem& problem,
                                  const std::optional<DeviceKey>& device,
                                  const Constraints& constraints,
                                  const TuneMode& mode, absl::Time deadline,
                                  const std::function<bool()>& cancelled = {});

  // The finder's devices with their queue depth.
  const std::vector<DeviceInfo>& devices() const { return devices_; }
  int QueueDepth(int device_index) const;
  std::string finder_name() const { return finder_->Name(); }

  CoreStats Stats();
  // Counters client programs report (ReportCounters).
  ReportedCounters& reported() { return reported_; }
  Store& store() { return *store_; }

  // Deletes matching records (store and memory); returns how many.
  absl::StatusOr<int64_t> Invalidate(const RecordFilter& filter);
  // Stores `record`, another host's measurement (e.g. an old version's
  // record the fleet holds, for a revalidation), as it is and not in the
  // fleet outbox, and has the core's caches of its key and family forget
  // them; the record as stored.
  absl::StatusOr<std::shared_ptr<const Record>> KeepRecord(Record record);
  // Starts a staged import into the store (Store::StagedImport: bounded
  // memory, nothing visible until it is committed).
  absl::StatusOr<std::unique_ptr<Store::StagedImport>> BeginImport();
  // Commits `import` (one transaction, all or nothing; with `tag`'s receipt
  // where it names the import) and drops the cached records it may have
  // replaced; returns how many records it stored.
  absl::StatusOr<int64_t> CommitImport(Store::StagedImport& import,
                                       const ImportTag& tag);

  // Stops the workers: queued searches fail with UNAVAILABLE, running ones
  // are waited for until `drain` passes. Flushes served counts.
  void Shutdown(absl::Duration drain);

 private:
  ReportedCounters reported_;
  struct Pending;  // one search with its waiters
  struct DeviceWorker;

  TuningCore(const Options& options, Store* store, Finder* finder,
             FleetSync* fleet, std::vector<DeviceInfo> devices);
  // A device serving `device` (nullopt: the first), or FAILED_PRECONDITION.
  absl::StatusOr<int> PickDevice(const std::optional<DeviceKey>& device);
  // The least busy device with this key, or -1.
  int LeastBusy(const DeviceKey& key);
  // For a kWhenIdle search: the least busy device with this key that no
  // program uses (and its worker does not hold), else LeastBusy.
  int LeastBusyIdle(const DeviceKey& key);
  // Whether a program uses device `index` (false without gpu_use).
  bool InUse(int index);
  // Whether device `index`'s worker holds its kWhenIdle searches back for
  // programs now (then a program's miss need not ask gpu_use about it).
  bool Holding(int index);
  // Takes the next search that may run on `w` (device `index`): the first
  // kNow one, else the first kWhenIdle one once the device has been idle
  // for idle_quiet. Null when stopping. Called with `lock` held on w.mu.
  std::shared_ptr<Pending> NextRunnable(int index, DeviceWorker& w,
                                        std::unique_lock<std::mutex>& lock);
  // Marks a kWhenIdle search held back for programs on device `index`
  // (counted once, its waiters with return_if_held answered). Called with
  // the device worker's mu held.
  void Hold(int index, Pending& p);
  // Marks `p` held and wakes its waiters (not counted as waiting for idle).
  static void MarkHeld(Pending& p);
  void WorkerLoop(int index);
  void RunSearch(int index, const std::shared_ptr<Pending>& pending);
  // Where a search's record came from (Record::revalidated_from_cudnn and
  // revalidated_from_driver); zero and empty for a full search.
  struct Provenance {
    int from_cudnn = 0;
    std::string from_driver;
  };
  // The finder's search for `pending`: a revalidation where it asks for one
  // and its source record is stored (then *provenance says which), else,
  // or where the revalidation cannot decide, a full search.
  absl::StatusOr<SearchResult> Search(int index, const Pending& pending,
                                      Provenance* provenance);
  // A revalidation of `key` on device `index` from `source` (null: none
  // stored): its candidates re-timed with `search` (whose stored_plans
  // must not be the source's) and judged (revalidation.h). The result where
  // it stands, counted as revalidated; nullopt where the key needs a full
  // search, counted and logged with `from` naming the source ("cuDNN
  // 91400", "driver 575.57.08").
  absl::StatusOr<std::optional<SearchResult>> Revalidate(
      int index, const ValidKey& key, const Record* source,
      const std::string& from, SearchOptions search);
  // `key`'s problem on its GPU model under other cuDNN versions (at most
  // kOtherVersionsRead records), for predictions and revalidations.
  // A prediction reads them without plans (RecordFilter::without_plans).
  absl::StatusOr<std::vector<Record>> OtherVersions(const ValidKey& key,
                                                    bool with_plans);
  // The record `key`'s problem has under cuDNN `from` in the store, else
  // (with a fleet) the fleet's record of it under `from` and the same CUDA
  // runtime; nullopt where there is none.
  std::optional<Record> RevalidationSourceOf(const ValidKey& key, int from);
  // Ends `pending`: leaves inflight_ and wakes its waiters.
  void Complete(const std::shared_ptr<Pending>& pending,
                absl::StatusOr<std::shared_ptr<const Record>> result,
                bool searched);
  // Stores a record the fleet answered with locally (not in the outbox) and
  // caches it; the record as stored.
  std::shared_ptr<const Record> KeepFleetRecord(Record record);
  // Queues `pending` on its device again (after a fleet wait); false when
  // stopping or the queue is full.
  bool Requeue(const std::shared_ptr<Pending>& pending);
  // Polls the fleet for the keys in fleet_waiting_.
  void FleetWaitLoop();
  // The stored record for `key` (memory first, then the store), or nullptr;
  // also nullptr (logged) when its row cannot be read.
  absl::StatusOr<std::shared_ptr<const Record>> Stored(const ValidKey& key);
  // The plans an earlier search of graph-API `key` kept in `record`, opened
  // (SearchOptions::stored_plans): a search again (forced, stale, after a
  // restart, or on another host of the fleet) loads them instead of
  // compiling. None for legacy keys or plans that do not open.
  std::vector<AlgoResult> StoredPlans(const ValidKey& key,
                                      const Record& record);
  // An answer from a stored record, counted as a hit.
  TuneAnswer Serve(std::shared_ptr<const Record> record,
                   const Constraints& constraints);
  void CountServed(int64_t id);
  void FlushLoop();
  void FlushServed();

  const Options options_;
  Store* const store_;
  Finder* const finder_;
  FleetSync* const fleet_;  // null: no fleet database
  const std::vector<DeviceInfo> devices_;
  std::vector<std::unique_ptr<DeviceWorker>> workers_;
  RecordCache cache_;
  FamilyCache families_;
  std::atomic<int64_t> predictions_{0};

  absl::Mutex mu_;
  // key text -> the search running or queued for it
  std::map<std::string, std::shared_ptr<Pending>> inflight_
      ABSL_GUARDED_BY(mu_);

  absl::Mutex served_mu_;
  // record id -> count not yet flushed
  std::map<int64_t, int64_t> served_ ABSL_GUARDED_BY(served_mu_);
  absl::CondVar flush_cv_;  // with served_mu_
  bool stopping_ ABSL_GUARDED_BY(served_mu_) = false;
  std::thread flusher_;

  // Searches left to another host's fleet lease, polled by fleet_waiter_
  // (woken through flush_cv_ at shutdown).
  std::vector<std::shared_ptr<Pending>> fleet_waiting_
      ABSL_GUARDED_BY(served_mu_);
  std::thread fleet_waiter_;

  std::atomic<int64_t> hits_{0}, misses_{0}, searches_{0}, failures_{0},
      coalesced_{0}, rejected_{0}, lookup_hits_{0}, lookup_misses_{0},
      waited_for_idle_{0}, revalidated_{0}, revalidation_full_searches_{0};
  std::atomic<int64_t> last_write_us_{0};
  std::atomic<int64_t> search_us_total_{0};
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_TUNING_CORE_H_
