// TuningCore: the daemon's logic, independent of gRPC.
//
// Lookup answers from the store, else the fleet, else (as the caller asks) a
// prediction: one decision, one answer (LookupAnswer). Tune answers from the
// store or queues a search on a GPU of the requested model; identical
// concurrent Tunes are coalesced into one search. Each device has one
// worker thread and a bounded queue (RESOURCE_EXHAUSTED when full). A caller
// whose deadline passes gets DEADLINE_EXCEEDED; the search it started still
// completes and is stored, so it never wedges the queue. A failed search
// fails the requests waiting on it, nothing else.
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
// The core composes rooms with one job each: StoredRecords (the store and
// its caches), DeviceQueues (per-device queues, workers and the idle hold),
// InflightSearches and PendingSearch (coalescing and waiting), SearchRunner
// (a search or revalidation and its record), FleetWaiter (the fleet before a
// search), Predictor, ServedCounts and ProgramKeys (the keys each program
// asked, for its next run's Warm).
//
// Thread safety: every public method is thread-safe.
#ifndef TUNEDB_SERVER_TUNING_TUNING_CORE_H_
#define TUNEDB_SERVER_TUNING_TUNING_CORE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/device_info.h"
#include "common/prediction.h"
#include "common/valid_key.h"
#include "server/finder/finder.h"
#include "server/tuning/fleet_sync.h"
#include "server/tuning/gpu_use.h"
#include "server/tuning/predictor.h"
#include "server/tuning/program_keys.h"
#include "server/tuning/reported_counters.h"
#include "server/tuning/search_again.h"
#include "server/tuning/search_runner.h"
#include "server/tuning/tune_mode.h"
#include "store/store.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

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

// What a Lookup answers: a stored record's (here or the fleet's), or, for
// a key with no record anywhere, a prediction.
struct LookupAnswer {
  // The record answering; null for a prediction. Shared with the record
  // cache, so answering copies no ranking.
  std::shared_ptr<const Record> record;
  // The record's choice under the constraints (nullopt: nothing meets
  // them), or the prediction's first candidate.
  std::optional<AlgoResult> choice;
  std::optional<Prediction> prediction;  // set for a prediction only
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
  ProgramKeys::Counts program_keys;     // the keys programs asked, and Warm
};

class DeviceQueues;
class FleetWaiter;
class InflightSearches;
class PendingSearch;
class ServedCounts;
class StoredRecords;

class TuningCore {
 public:
  struct Options {
    // Searches waiting per device before RESOURCE_EXHAUSTED. Default 1024.
    int queue_capacity = 1024;
    // Finder options for each search (workspace cap, per-search timeout).
    SearchOptions search;
    // Host name stored with each record; "" = gethostname().
    std::string host;
    // How often served counts and the keys programs asked are flushed to
    // the store. Default 2 s.
    absl::Duration flush_interval = absl::Seconds(2);
    // Records kept in memory for Lookup and Tune (0: none). Default 65536.
    size_t record_cache_capacity = 65536;
    // A prediction (shape_predictor.h): how many nearest tuned problems vote.
    // Default 3.
    int predict_neighbours = 3;
    // A prediction from the nearest shapes is made only where the nearest
    // tuned one is at most this far (ShapeDistance); farther, the key is a
    // miss (why 1: docs/graph-api.md, "Keys never tuned"). Default 1.
    double predict_max_distance = 1.0;
    // How long a family read from the store for a prediction is reused
    // before it is read again (a search of the family drops it at once).
    // Default 5 s.
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
    // What the keys programs asked may take (program_keys.h).
    ProgramKeys::Limits program_keys;
  };

  // Takes the finder's device list at construction; `store`, `finder` and
  // `fleet` (null: no fleet database) must outlive the core.
  static absl::StatusOr<std::unique_ptr<TuningCore>> Create(
      const Options& options, Store* store, Finder* finder,
      FleetSync* fleet = nullptr);
  ~TuningCore();

  // The one Lookup decision, which never searches: the stored record, else
  // (with a fleet) the fleet's record, kept here; else, with `predict`, a
  // prediction under `constraints` from the same problem tuned under
  // another cuDNN version of this GPU model (version_predictor.h), else,
  // with Predictors::kAll, from the nearest tuned problems of its family
  // (shape_predictor.h). NOT_FOUND when none answers. A stale record
  // (measured before launch timing) is still served. Counted as a Lookup
  // hit or miss, and a prediction in Stats().predictions. A stored answer
  // is counted as served to `program` (LookupRequest.program; "": none).
  absl::StatusOr<LookupAnswer> Lookup(
      const ValidKey& key, const Constraints& constraints,
      std::optional<Predictors> predict = std::nullopt,
      absl::string_view program = "");

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
  // The keys each program asked (LookupRequest.program), for Warm.
  ProgramKeys& program_keys() { return *program_keys_; }
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
  // are waited for until `drain` passes. Flushes served counts and the keys
  // programs asked.
  void Shutdown(absl::Duration drain);

 private:
  TuningCore(const Options& options, Store* store, Finder* finder,
             FleetSync* fleet, std::vector<DeviceInfo> devices);
  // An answer from a stored record, counted as a hit and as served to
  // `program` ("": none named).
  TuneAnswer Serve(std::shared_ptr<const Record> record,
                   const Constraints& constraints,
                   absl::string_view program = "");
  // Whether `record` (null: none) answers a Tune as `mode` asks, on a device
  // running driver `driver`: not stale, and not an older driver's that the
  // Tune re-times.
  static bool Answers(const Record* record, const TuneMode& mode,
                      const std::string& driver);
  // The search a Tune of `key` waits for: joined (*joined; made kNow by a
  // kNow caller), else queued. Where a search stored the key's record since
  // the caller looked, *served is its answer and no search is returned.
  absl::StatusOr<std::shared_ptr<PendingSearch>> JoinOrQueue(
      const ValidKey& key, const std::string& driver, const TuneMode& mode,
      const Constraints& constraints, bool* joined,
      std::optional<TuneAnswer>* served);
  // Runs `search` on device `index` (its worker): the fleet first, then a
  // search here.
  void RunSearch(int index, const std::shared_ptr<PendingSearch>& search);
  // Ends `search`: leaves the searches in flight and wakes its waiters.
  void Complete(const std::shared_ptr<PendingSearch>& search,
                absl::StatusOr<std::shared_ptr<const Record>> result,
                bool searched);

  const Options options_;
  Store* const store_;
  Finder* const finder_;
  FleetSync* const fleet_;  // null: no fleet database
  const std::vector<DeviceInfo> devices_;
  // Destroyed in reverse: the workers and the fleet thread stop first.
  std::unique_ptr<StoredRecords> records_;
  std::unique_ptr<Predictor> predictor_;
  std::unique_ptr<ServedCounts> served_;
  std::unique_ptr<ProgramKeys> program_keys_;
  std::unique_ptr<InflightSearches> inflight_;
  std::unique_ptr<DeviceQueues> queues_;
  std::unique_ptr<SearchRunner> runner_;
  std::unique_ptr<FleetWaiter> fleet_waiter_;  // null without a fleet
  ReportedCounters reported_;
  std::atomic<bool> shut_down_{false};
  std::atomic<int64_t> hits_{0}, misses_{0}, lookup_hits_{0},
      lookup_misses_{0}, coalesced_{0};
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_TUNING_CORE_H_
