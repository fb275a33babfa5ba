// DaemonMetrics: tunedbd's Prometheus endpoint (`--metrics-address`), an
// HTTP server (prometheus-cpp's civetweb) answering GET /metrics.
//
// It keeps no counters of its own: at each scrape it reads the tuning core's
// Stats() (lookups, tunes, searches, queue depths, records, database size,
// last write), the WAL file's size, the worker supervisor's starts and exits
// and the service's job answers (kept, their bytes, not fixed), and turns
// them into metric families. The one thing a scrape cannot
// rebuild from totals, the distribution of search durations, it is fed
// through TuningCore::Options::on_search (ObserveSearch).
//
// Usage (Server does this):
//   ASSIGN_OR_RETURN(auto metrics, DaemonMetrics::Create(options));
//   core_options.on_search = [m = metrics.get()](const SearchEvent& e) {
//     m->ObserveSearch(e);
//   };
//   ... create the core ...
//   RETURN_IF_ERROR(metrics->Serve(core, supervisor_or_null,
//                                  &service->job_answers()));
//   ... destroy the metrics before the core ...
//
// Thread safety: ObserveSearch() may be called from any thread, scrapes run
// on the HTTP server's threads; Serve() is called once, before any scrape.
#ifndef TUNEDB_SERVER_SERVICE_DAEMON_METRICS_H_
#define TUNEDB_SERVER_SERVICE_DAEMON_METRICS_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/service/job_answers.h"
#include "server/tuning/tuning_core.h"
#include "server/worker/worker_supervisor.h"

namespace prometheus {
class Exposer;
class Registry;
class Histogram;
template <typename T>
class Family;
}  // namespace prometheus

namespace tunedb {

class DaemonMetrics {
 public:
  struct Options {
    // Where to listen: "host:port", or a bare port meaning 127.0.0.1:PORT.
    // Required (the daemon makes no DaemonMetrics without one).
    std::string address;
    // The daemon's version, on tunedb_build_info. Default "".
    std::string version;
  };

  // "9464" -> "127.0.0.1:9464"; anything with a colon is kept as it is.
  static std::string ListenAddress(absl::string_view address);

  // Checks the options; listens only from Serve().
  static absl::StatusOr<std::unique_ptr<DaemonMetrics>> Create(
      const Options& options);
  ~DaemonMetrics();

  // Records one search in tunedb_search_duration_seconds{device, pass}
  // (successful searches only: failures are counted, not timed).
  void ObserveSearch(const SearchEvent& event);

  // Starts answering scrapes from `core`, `workers` (null when the finder
  // runs in process) and `job_answers` (null: none); all must outlive this
  // object.
  absl::Status Serve(TuningCore* core, const WorkerSupervisor* workers,
                     const JobAnswers* job_answers);

  // The port bound by Serve() (0 before).
  int port() const { return port_; }

 private:
  class StatsCollectable;

  explicit DaemonMetrics(const Options& options);

  const Options options_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Histogram>* search_seconds_ = nullptr;
  std::shared_ptr<StatsCollectable> stats_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_ = 0;
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SERVICE_DAEMON_METRICS_H_
