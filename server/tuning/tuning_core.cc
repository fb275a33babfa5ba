#include "server/tuning/tuning_core.h"

#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/record_results.h"
#include "common/status_macros.h"
#include "server/tuning/device_queues.h"
#include "server/tuning/fleet_waiter.h"
#include "server/tuning/inflight_searches.h"
#include "server/tuning/pending_search.h"
#include "server/tuning/served_counts.h"
#include "server/tuning/stored_records.h"
#include "spdlog/spdlog.h"

namespace tunedb {
namespace {

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

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
      devices_(std::move(devices)) {
  records_ = std::make_unique<StoredRecords>(
      store, options.record_cache_capacity, options.family_ttl);
  predictor_ = std::make_unique<Predictor>(
      Predictor::Options{options.predict_neighbours,
                         options.predict_max_distance},
      records_.get());
  served_ = std::make_unique<ServedCounts>(store, options.flush_interval);
  program_keys_ = std::make_unique<ProgramKeys>(store, options.program_keys,
                                                options.flush_interval);
  inflight_ = std::make_unique<InflightSearches>();
  runner_ = std::make_unique<SearchRunner>(
      SearchRunner::Options{options.search, options.host,
                            options.far_behind_factor, options.on_search},
      &devices_, finder, records_.get(), fleet);
  queues_ = std::make_unique<DeviceQueues>(
      DeviceQueues::Options{options.queue_capacity, options.gpu_use,
                            options.idle_poll, options.idle_quiet},
      devices_);
  if (fleet_ != nullptr) {
    fleet_waiter_ = std::make_unique<FleetWaiter>(
        fleet_, records_.get(),
        [this](const std::shared_ptr<PendingSearch>& search,
               absl::StatusOr<std::shared_ptr<const Record>> result) {
          Complete(search, std::move(result), /*searched=*/false);
        },
        [this](const std::shared_ptr<PendingSearch>& search) {
          return queues_->Requeue(search);
        });
  }
  queues_->Start([this](int index,
                        const std::shared_ptr<PendingSearch>& search) {
    RunSearch(index, search);
  });
}

TuningCore::~TuningCore() { Shutdown(absl::ZeroDuration()); }

void TuningCore::Shutdown(absl::Duration drain) {
  if (shut_down_.exchange(true)) return;
  const absl::Status stopping =
      absl::UnavailableError("tunedbd is shutting down");
  // Queued searches fail now; a running one gets until `drain`, and is then
  // bounded by the finder's own per-search timeout.
  for (auto& search : queues_->Stop()) Complete(search, stopping, false);
  queues_->Join(absl::Now() + drain);
  if (fleet_waiter_ != nullptr) {
    for (auto& search : fleet_waiter_->Stop()) {
      Complete(search, stopping, false);
    }
  }
  served_->Stop();
  program_keys_->Stop();
}

int TuningCore::QueueDepth(int index) const {
  return queues_->QueueDepth(index);
}

TuneAnswer TuningCore::Serve(std::shared_ptr<const Record> record,
                             const Constraints& constraints,
                             absl::string_view program) {
  hits_.fetch_add(1, std::memory_order_relaxed);
  served_->Count(record->id, program);
  TuneAnswer answer;
  answer.choice = Choose(*record, constraints);
  answer.record = std::move(record);
  return answer;
}

absl::StatusOr<LookupAnswer> TuningCore::Lookup(
    const ValidKey& key, const Constraints& constraints,
    std::optional<Predictors> predict, absl::string_view program) {
  ASSIGN_OR_RETURN(std::shared_ptr<const Record> record, records_->Get(key));
  if (!record && fleet_ != nullptr) {
    std::optional<Record> found = fleet_->Fetch(key);
    if (found) record = records_->KeepFleetRecord(*std::move(found));
  }
  LookupAnswer answer;
  if (record) {
    lookup_hits_.fetch_add(1, std::memory_order_relaxed);
    TuneAnswer served = Serve(std::move(record), constraints, program);
    answer.record = std::move(served.record);
    answer.choice = std::move(served.choice);
    return answer;
  }
  misses_.fetch_add(1, std::memory_order_relaxed);
  lookup_misses_.fetch_add(1, std::memory_order_relaxed);
  if (!predict) {
    return absl::NotFoundError(
        absl::StrCat("no record for key ", key.HashText()));
  }
  ASSIGN_OR_RETURN(answer.prediction,
                   predictor_->Predict(key, constraints, *predict));
  answer.choice = answer.prediction->candidates.front();
  return answer;
}

bool TuningCore::Answers(const Record* record, const TuneMode& mode,
                         const std::string& driver) {
  return record != nullptr && !record->stale() &&
         !RetimesOlderDriver(mode.revalidate_older_driver, record, driver);
}

absl::StatusOr<TuneAnswer> TuningCore::Tune(
    const ConvProblem& problem, const std::optional<DeviceKey>& device,
    const Constraints& constraints, const TuneMode& mode, absl::Time deadline,
    const std::function<bool()>& cancelled) {
  ASSIGN_OR_RETURN(const int index, queues_->PickDevice(device));
  RETURN_IF_ERROR(CheckRevalidatedFrom(mode.revalidate_from_cudnn,
                                       devices_[index].key.cudnn_version,
                                       "revalidate_from_cudnn"));
  RETURN_IF_ERROR(CheckRevalidateOlderDriver(mode));
  // The finder's device keys were validated when its workers reported them.
  const ValidKey key =
      ValidKey::FromValidated(ProblemKey{devices_[index].key, problem});
  const std::string& driver = devices_[index].driver_version;
  if (!mode.force) {
    ASSIGN_OR_RETURN(std::shared_ptr<const Record> record,
                     records_->Get(key));
    if (Answers(record.get(), mode, driver)) {
      return Serve(std::move(record), constraints);
    }
  }
  misses_.fetch_add(1, std::memory_order_relaxed);
  bool joined = false;  // this call waits for a search another call started
  std::optional<TuneAnswer> served;
  ASSIGN_OR_RETURN(
      std::shared_ptr<PendingSearch> search,
      JoinOrQueue(key, driver, mode, constraints, &joined, &served));
  if (served) return *std::move(served);
  ASSIGN_OR_RETURN(SearchOutcome outcome,
                   search->Wait(mode.return_if_held, deadline, cancelled));
  TuneAnswer answer;
  if (outcome.held) {
    answer.held = true;
    return answer;
  }
  answer.record = std::move(outcome.record);
  answer.choice = Choose(*answer.record, constraints);
  answer.searched = outcome.searched && !joined;
  answer.waited_for_search =
      joined || (!outcome.searched && outcome.waited_on_fleet);
  return answer;
}

absl::StatusOr<std::shared_ptr<PendingSearch>> TuningCore::JoinOrQueue(
    const ValidKey& key, const std::string& driver, const TuneMode& mode,
    const Constraints& constraints, bool* joined,
    std::optional<TuneAnswer>* served) {
  // A program's miss that starts a search asks which devices programs use,
  // before taking the searches' lock (NVML is not to be waited on under
  // it); one that joins a search (a client's retry) asks nothing.
  const bool when_idle =
      mode.when == SearchWhen::kWhenIdle && options_.gpu_use != nullptr;
  int idle_index = -1;
  if (when_idle && !inflight_->Contains(key.text())) {
    idle_index = queues_->LeastBusyIdle(key.device());
  }
  auto join = [&](PendingSearch& search) {
    coalesced_.fetch_add(1, std::memory_order_relaxed);
    if (mode.when == SearchWhen::kNow) queues_->RunNow(search);
  };
  auto start = [&]() -> absl::StatusOr<std::shared_ptr<PendingSearch>> {
    std::shared_ptr<const Record> record;
    if (!mode.force) {
      // A search may have finished since the caller's store read (it stores
      // before leaving the searches in flight): look again.
      ASSIGN_OR_RETURN(record, records_->Get(key));
      if (Answers(record.get(), mode, driver)) {
        misses_.fetch_sub(1, std::memory_order_relaxed);
        *served = Serve(std::move(record), constraints);
        return nullptr;
      }
    }
    // Devices with one key share results: the least busy one searches (for
    // a program's miss, the least busy idle one).
    SearchRequest request{
        key, idle_index >= 0 ? idle_index : queues_->LeastBusy(key.device())};
    request.force = mode.force;
    request.revalidate_from = mode.revalidate_from_cudnn;
    request.revalidate_older_driver = mode.revalidate_older_driver;
    // A key with nothing stored here asks the fleet first, as any miss.
    request.retimes_stored = RetimesOlderDriver(
        mode.revalidate_older_driver, record.get(), driver);
    auto search = std::make_shared<PendingSearch>(std::move(request),
                                                  when_idle);
    RETURN_IF_ERROR(queues_->Enqueue(search));
    return search;
  };
  ASSIGN_OR_RETURN(InflightSearches::Entry entry,
                   inflight_->JoinOrStart(key.text(), join, start));
  *joined = entry.joined;
  return entry.search;
}

void TuningCore::RunSearch(int index,
                           const std::shared_ptr<PendingSearch>& search) {
  if (fleet_waiter_ != nullptr &&
      fleet_waiter_->Resolve(search, devices_[index].driver_version)) {
    return;
  }
  Complete(search, runner_->Run(index, search->request()), true);
}

void TuningCore::Complete(const std::shared_ptr<PendingSearch>& search,
                          absl::StatusOr<std::shared_ptr<const Record>> result,
                          bool searched) {
  inflight_->Remove(search->key().text());
  search->Finish(std::move(result), searched);
}

absl::StatusOr<int64_t> TuningCore::Invalidate(const RecordFilter& filter) {
  return records_->Invalidate(filter);
}

absl::StatusOr<std::shared_ptr<const Record>> TuningCore::KeepRecord(
    Record record) {
  return records_->Keep(std::move(record));
}

absl::StatusOr<std::unique_ptr<Store::StagedImport>>
TuningCore::BeginImport() {
  return store_->BeginImport();
}

absl::StatusOr<int64_t> TuningCore::CommitImport(Store::StagedImport& import,
                                                 const ImportTag& tag) {
  return records_->CommitImport(import, tag);
}

CoreStats TuningCore::Stats() {
  CoreStats s;
  absl::StatusOr<int64_t> records = store_->Count();
  s.records = records.ok() ? *records : -1;
  s.hits = hits_.load();
  s.misses = misses_.load();
  s.lookup_hits = lookup_hits_.load();
  s.predictions = predictor_->predictions();
  s.lookup_misses = lookup_misses_.load();
  s.last_write_us = records_->last_write_us();
  s.searches = runner_->searches();
  s.search_failures = runner_->failures();
  s.coalesced = coalesced_.load();
  s.waited_for_idle = queues_->waited_for_idle();
  s.revalidated = runner_->revalidated();
  s.revalidation_full_searches = runner_->revalidation_full_searches();
  s.rejected = queues_->rejected();
  s.search_ms_total = runner_->search_ms_total();
  for (size_t i = 0; i < devices_.size(); ++i) {
    s.queue_depths[static_cast<int>(i)] = QueueDepth(static_cast<int>(i));
  }
  s.database_bytes = store_->SizeBytes();
  s.finder = finder_->Name();
  s.database_path = store_->path();
  if (fleet_ != nullptr) s.fleet = fleet_->Health();
  s.reported = reported_.Get();
  s.program_keys = program_keys_->counts();
  return s;
}

}  // namespace tunedb
