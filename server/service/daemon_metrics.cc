#include "server/service/daemon_metrics.h"

#include <exception>
#include <filesystem>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "prometheus/collectable.h"
#include "prometheus/exposer.h"
#include "prometheus/histogram.h"
#include "prometheus/metric_family.h"
#include "prometheus/registry.h"

namespace tunedb {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

// Search wall times span a cached heuristic (ms) to a full search of a
// large problem (minutes).
const std::vector<double>& SearchBuckets() {
  static const auto* buckets = new std::vector<double>{
      0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};
  return *buckets;
}

MetricFamily Family(std::string name, std::string help, MetricType type) {
  MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  return f;
}

void AddValue(MetricFamily& f, Labels labels, double value) {
  ClientMetric m;
  m.label = std::move(labels);
  if (f.type == MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  f.metric.push_back(std::move(m));
}

// A gauge family with one sample.
MetricFamily OneGauge(std::string name, std::string help, double value,
                      Labels labels = {}) {
  MetricFamily f = Family(std::move(name), std::move(help), MetricType::Gauge);
  AddValue(f, std::move(labels), value);
  return f;
}

// A counter family with one sample per outcome="..." label.
MetricFamily ByOutcome(
    std::string name, std::string help,
    const std::vector<std::pair<const char*, double>>& outcomes) {
  MetricFamily f =
      Family(std::move(name), std::move(help), MetricType::Counter);
  for (const auto& [outcome, value] : outcomes) {
    AddValue(f, {{"outcome", outcome}}, value);
  }
  return f;
}

int64_t FileBytes(const std::string& path) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<int64_t>(size);
}

// Requests and searches: lookups, tunes and searches by outcome, the
// counters clients reported and the queue depths.
void AddRequestFamilies(const CoreStats& s, std::vector<MetricFamily>& out) {
  out.push_back(ByOutcome("tunedb_lookups_total",
                          "Lookup requests by outcome: hit (answered from "
                          "the store) or miss (nothing stored).",
                          {{"hit", s.lookup_hits}, {"miss", s.lookup_misses}}));
  out.push_back(ByOutcome(
      "tunedb_tunes_total",
      "Tune requests by outcome: hit (answered from the store), miss "
      "(nothing usable stored: a search was queued or joined), coalesced "
      "(the misses that joined a search already queued or running) and "
      "rejected (the device's queue was full).",
      {{"hit", s.hits - s.lookup_hits},
       {"miss", s.misses - s.lookup_misses},
       {"coalesced", s.coalesced},
       {"rejected", s.rejected}}));
  out.push_back(ByOutcome(
      "tunedb_searches_total",
      "Searches run by outcome: searched (measured and stored) or failed "
      "(the finder failed, timed out, or the result could not be stored); "
      "waited_for_idle counts the searches of programs' misses that waited "
      "for their GPU to be idle first; revalidated the searches that "
      "re-timed an older cuDNN version's choices instead of searching in "
      "full, revalidation_full_search those that could not decide.",
      {{"searched", s.searches},
       {"failed", s.search_failures},
       {"waited_for_idle", s.waited_for_idle},
       {"revalidated", s.revalidated},
       {"revalidation_full_search", s.revalidation_full_searches}}));

  MetricFamily reported =
      Family("tunedb_reported_total",
             "Counters client programs reported (ReportCounters), summed, by "
             "name: preload.hit, preload.miss, ... from `tunedb run --report`.",
             MetricType::Counter);
  for (const auto& [name, sum] : s.reported.sums) {
    AddValue(reported, {{"name", name}}, static_cast<double>(sum));
  }
  out.push_back(std::move(reported));

  MetricFamily queue = Family("tunedb_queue_depth",
                              "Searches waiting or running, per device index.",
                              MetricType::Gauge);
  for (const auto& [device, depth] : s.queue_depths) {
    AddValue(queue, {{"device", absl::StrCat(device)}}, depth);
  }
  out.push_back(std::move(queue));
}

// The keys programs asked (LookupRequest.program) and the Warm calls that
// answered them.
void AddProgramKeyFamilies(const ProgramKeys::Counts& c,
                           std::vector<MetricFamily>& out) {
  out.push_back(ByOutcome(
      "tunedb_program_keys_total",
      "Keys programs asked: remembered (new, kept for the program's next "
      "run), not_remembered (too long, or memory full until the next "
      "flush), flush_failed (batches the store refused), "
      "programs_forgotten (past the bounds, least recent first).",
      {{"remembered", c.remembered},
       {"not_remembered", c.not_remembered},
       {"flush_failed", c.flush_failures},
       {"programs_forgotten", c.programs_forgotten}}));
  out.push_back(ByOutcome(
      "tunedb_warm_total",
      "Warm calls (outcome=\"call\") and the keys they answered "
      "(outcome=\"key\").",
      {{"call", c.warms}, {"key", c.warm_keys}}));
}

// The jobs' first answers the service keeps (job_answers.h).
void AddJobAnswerFamilies(const JobAnswers& answers,
                          std::vector<MetricFamily>& out) {
  out.push_back(OneGauge(
      "tunedb_job_answers",
      "Jobs' first Lookup answers kept, each given again to the job's later "
      "Lookups of its key (LookupRequest.job).",
      static_cast<double>(answers.entries())));
  out.push_back(OneGauge(
      "tunedb_job_answers_bytes",
      "Memory the kept job answers and their jobs take, bytes (bounded).",
      static_cast<double>(answers.bytes())));
  MetricFamily not_fixed = Family(
      "tunedb_job_answers_not_fixed_total",
      "Job answers given but not kept, the kept ones being at their bound "
      "of answers or bytes: a later Lookup of the job may get another "
      "answer.",
      MetricType::Counter);
  AddValue(not_fixed, {}, static_cast<double>(answers.not_fixed()));
  out.push_back(std::move(not_fixed));
}

// The database: its records, file sizes and last write.
void AddDatabaseFamilies(const CoreStats& s, std::vector<MetricFamily>& out) {
  if (s.records >= 0) {
    out.push_back(
        OneGauge("tunedb_records", "Records in the database.", s.records));
  }
  out.push_back(OneGauge("tunedb_database_bytes",
                         "Size of the SQLite database file, bytes.",
                         s.database_bytes));
  out.push_back(
      OneGauge("tunedb_database_wal_bytes",
               "Size of the SQLite write-ahead log (the -wal file), bytes.",
               FileBytes(s.database_path + "-wal")));
  out.push_back(OneGauge(
      "tunedb_last_write_timestamp_seconds",
      "Unix time when a search result, import or invalidation was last "
      "stored; 0 if none since the daemon started.",
      s.last_write_us / 1e6));
}

// The fleet tier, where there is one.
void AddFleetFamilies(const FleetHealth& fleet,
                      std::vector<MetricFamily>& out) {
  out.push_back(
      OneGauge("tunedb_fleet_connected",
               "1 if the last fleet database operation succeeded, else 0.",
               fleet.connected ? 1 : 0));
  out.push_back(
      OneGauge("tunedb_fleet_outbox",
               "Search results waiting in the local outbox to be published to "
               "the fleet database.",
               fleet.outbox));
  out.push_back(ByOutcome(
      "tunedb_fleet_operations_total",
      "Fleet tier events: published (records), fetched (local misses "
      "answered from the fleet), claimed (searches this host leased), "
      "waited (keys left to another host's lease), failed (fleet "
      "operations that failed) and jobs_done (fleet prewarm jobs "
      "finished here).",
      {{"published", fleet.published},
       {"fetched", fleet.fetched},
       {"claimed", fleet.claims},
       {"waited", fleet.waits},
       {"failed", fleet.errors},
       {"jobs_done", fleet.jobs_done}}));
}

// The worker processes of devices 0 .. device_count-1: starts, and exits
// during searches by reason.
void AddWorkerFamilies(const WorkerSupervisor& workers, size_t device_count,
                       std::vector<MetricFamily>& out) {
  MetricFamily starts =
      Family("tunedb_worker_starts_total",
             "tunedb-worker processes started per device index (the "
             "first start and every restart).",
             MetricType::Counter);
  MetricFamily exits =
      Family("tunedb_worker_exits_total",
             "tunedb-worker exits seen during searches, per device index, by "
             "reason: timeout (killed past the search timeout), died (crashed, "
             "signalled or exited) or fatal_error (reported a fatal device "
             "error).",
             MetricType::Counter);
  for (size_t i = 0; i < device_count; ++i) {
    const WorkerSupervisor::Supervision sup =
        workers.supervision(static_cast<int>(i));
    const std::string device = absl::StrCat(i);
    AddValue(starts, {{"device", device}}, sup.starts);
    for (const char* reason : {"timeout", "died", "fatal_error"}) {
      auto it = sup.exits.find(reason);
      AddValue(exits, {{"device", device}, {"reason", reason}},
               it == sup.exits.end() ? 0 : it->second);
    }
  }
  out.push_back(std::move(starts));
  out.push_back(std::move(exits));
}

// What this daemon is: its version and finder, and its devices.
void AddInfoFamilies(const std::string& version, const std::string& finder,
                     const std::vector<DeviceInfo>& device_infos,
                     std::vector<MetricFamily>& out) {
  out.push_back(
      OneGauge("tunedb_build_info",
               "Always 1; the labels name the daemon's version and finder.", 1,
               {{"version", version}, {"finder", finder}}));

  MetricFamily devices =
      Family("tunedb_device_info",
             "Always 1, one per device the daemon searches on; the labels "
             "name the GPU, its cuDNN and CUDA runtime, and the driver.",
             MetricType::Gauge);
  for (size_t i = 0; i < device_infos.size(); ++i) {
    const DeviceInfo& d = device_infos[i];
    AddValue(
        devices,
        {{"device", absl::StrCat(i)},
         {"ordinal", absl::StrCat(d.ordinal)},
         {"gpu_model", d.key.gpu_model},
         {"compute_capability",
          absl::StrCat(d.key.cc_major, ".", d.key.cc_minor)},
         {"cudnn_version", CudnnVersionText(d.key.cudnn_version)},
         {"cuda_runtime_version", CudaVersionText(d.key.cuda_runtime_version)},
         {"driver", d.driver_version},
         {"uuid", d.uuid}},
        1);
  }
  out.push_back(std::move(devices));
}

}  // namespace

// Reads the core, the worker supervisor and the job answers at each scrape.
class DaemonMetrics::StatsCollectable final : public prometheus::Collectable {
 public:
  StatsCollectable(TuningCore* core, const WorkerSupervisor* workers,
                   const JobAnswers* job_answers, std::string version)
      : core_(core),
        workers_(workers),
        job_answers_(job_answers),
        version_(std::move(version)) {}

  std::vector<MetricFamily> Collect() const override {
    const CoreStats s = core_->Stats();
    std::vector<MetricFamily> out;
    AddRequestFamilies(s, out);
    AddProgramKeyFamilies(s.program_keys, out);
    if (job_answers_ != nullptr) AddJobAnswerFamilies(*job_answers_, out);
    AddDatabaseFamilies(s, out);
    if (s.fleet.enabled) AddFleetFamilies(s.fleet, out);
    if (workers_ != nullptr) {
      AddWorkerFamilies(*workers_, core_->devices().size(), out);
    }
    AddInfoFamilies(version_, s.finder, core_->devices(), out);
    return out;
  }

 private:
  TuningCore* const core_;
  const WorkerSupervisor* const workers_;
  const JobAnswers* const job_answers_;
  const std::string version_;
};

std::string DaemonMetrics::ListenAddress(absl::string_view address) {
  if (address.find(':') != absl::string_view::npos) return std::string(address);
  return absl::StrCat("127.0.0.1:", address);
}

absl::StatusOr<std::unique_ptr<DaemonMetrics>> DaemonMetrics::Create(
    const Options& options) {
  if (options.address.empty()) {
    return absl::InvalidArgumentError("metrics address is empty");
  }
  return std::unique_ptr<DaemonMetrics>(new DaemonMetrics(options));
}

DaemonMetrics::DaemonMetrics(const Options& options)
    : options_(options),
      registry_(std::make_shared<prometheus::Registry>()),
      search_seconds_(
          &prometheus::BuildHistogram()
               .Name("tunedb_search_duration_seconds")
               .Help("Wall time of successful searches, per device index "
                     "and pass: total, and where the cuDNN finder reports "
                     "them its phases setup, find, screen, retime and "
                     "verify.")
               .Register(*registry_)) {}

DaemonMetrics::~DaemonMetrics() = default;

void DaemonMetrics::ObserveSearch(const SearchEvent& event) {
  if (!event.ok) return;
  const std::string device = absl::StrCat(event.device_index);
  auto observe = [&](const char* pass, double ms) {
    search_seconds_
        ->Add({{"device", device}, {"pass", pass}},
              prometheus::Histogram::BucketBoundaries(SearchBuckets()))
        .Observe(ms / 1000.0);
  };
  observe("total", event.total_ms);
  const SearchPhases& p = event.phases;
  if (p.setup_ms + p.find_ms + p.screen_ms + p.retime_ms + p.verify_ms <= 0) {
    return;  // this finder does not report its phases
  }
  observe("setup", p.setup_ms);
  observe("find", p.find_ms);
  observe("screen", p.screen_ms);
  observe("retime", p.retime_ms);
  observe("verify", p.verify_ms);
}

absl::Status DaemonMetrics::Serve(TuningCore* core,
                                  const WorkerSupervisor* workers,
                                  const JobAnswers* job_answers) {
  const std::string address = ListenAddress(options_.address);
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(address, 2);
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", address, ": ", e.what()));
  }
  stats_ = std::make_shared<StatsCollectable>(core, workers, job_answers,
                                              options_.version);
  exposer_->RegisterCollectable(stats_);
  exposer_->RegisterCollectable(registry_);
  const std::vector<int> ports = exposer_->GetListeningPorts();
  port_ = ports.empty() ? 0 : ports.front();
  return absl::OkStatus();
}

}  // namespace tunedb
