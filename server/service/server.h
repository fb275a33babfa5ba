// Server: the tunedbd gRPC server — the TuneDb service plus grpc.health.v1
// and server reflection — on a Unix socket (default) and/or TCP.
//
// Usage (tests run it in-process the same way the daemon does):
//   ServerOptions options;
//   options.unix_socket = "/tmp/t.sock";
//   options.store.path = ":memory:";
//   options.finder = "simulated";
//   ASSIGN_OR_RETURN(auto server, Server::BuildAndStart(options));
//   ... server->address() ...
//   server->Shutdown(absl::Seconds(5));
//
// Thread safety: Shutdown() and Wait() may be called from any thread.
#ifndef TUNEDB_SERVER_SERVICE_SERVER_H_
#define TUNEDB_SERVER_SERVICE_SERVER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/tls_credentials.h"
#include "server/finder/finder.h"
#include "server/service/job_answers.h"
#include "server/tuning/background_revalidator.h"
#include "server/tuning/fleet_job_runner.h"
#include "server/tuning/fleet_sync.h"
#include "server/tuning/tuning_core.h"
#include "store/fleet/fleet_jobs.h"
#include "store/fleet/fleet_options.h"
#include "store/fleet/fleet_store.h"
#include "store/store.h"

namespace grpc {
class Server;
class ServerCredentials;
}  // namespace grpc

namespace tunedb {

class ActivatedListener;
class DaemonMetrics;
class TuneDbService;

struct ServerOptions {
  // Unix socket path; "" disables it. Created with mode 0660.
  std::string unix_socket = "/run/tunedb/tunedb.sock";
  // Listening Unix stream sockets passed by systemd socket activation
  // (TakeSystemdSockets); when given they are served instead of
  // unix_socket, and systemd owns their files. The server closes them.
  // Default: none.
  std::vector<int> activated_sockets;
  // TCP "host:port" (port 0 picks one); "" (default) disables TCP. TCP
  // needs `tls` (a certificate and key) or `insecure_tcp`.
  std::string tcp_address;
  // TLS of the TCP listener; with tls.client_ca_file clients must present a
  // certificate it signed (mTLS). The Unix socket never uses TLS.
  // Default: none.
  TlsServerFiles tls;
  // Serve TCP without TLS (logged as a warning). Default: false.
  bool insecure_tcp = false;
  // Plain TCP "host:port" serving only grpc.health.v1 (the daemon's serving
  // status, nothing else), for probes that cannot do TLS or Unix sockets,
  // such as Kubernetes gRPC probes. "" (default) disables it.
  std::string health_address;
  // The database.
  Store::Options store;
  // Which finder: "cudnn" (default: per-GPU tunedb-worker processes running
  // cuDNN searches) or "simulated" (the test double, in process).
  std::string finder = "cudnn";
  // Options of the simulated finder, e.g. "devices=2;slow_ms=50;fail=1"
  // (see SimulatedFinder::Options::Parse).
  std::string simulated_options;
  // Worker program for the "cudnn" finder; "" = tunedb-worker next to the
  // running executable.
  std::string worker_path;
  // cuDNN library folders, one set of workers per folder ("" = the default
  // search path). Lets one host serve several cuDNN versions.
  std::vector<std::string> cudnn_library_dirs;
  // Search and queue behaviour.
  TuningCore::Options core;
  // The fleet database (docs/fleet.md); fleet.url "" (default): none.
  FleetOptions fleet;
  // Leases, polling and retries of the fleet tier.
  FleetSync::Options fleet_sync;
  // Run fleet prewarm jobs for this host's devices. Default true.
  bool fleet_jobs = true;
  FleetJobRunner::Options fleet_job_runner;
  // On start, make the records the served cuDNN versions lack from those
  // of older versions of the same GPU models, in the background
  // (BackgroundRevalidator, docs/revalidation.md). Default true.
  bool revalidate_on_start = true;
  BackgroundRevalidator::Options revalidation;
  // Prometheus endpoint, "host:port" or a bare port (127.0.0.1:PORT); ""
  // (default) serves no metrics. See DaemonMetrics.
  std::string metrics_address;
  // The bounds of the jobs' first answers (LookupRequest.job, JobAnswers).
  // Default: JobAnswers::Options.
  JobAnswers::Options job_answers;
  // Searches that programs' misses ask for (TuneRequest.when_idle):
  // "when-idle" (default: they wait until no program uses the GPU, or go to
  // an idle GPU of the model; needs NVML and the cudnn finder, else they run
  // at once, logged) or "at-once".
  std::string miss_searches = "when-idle";
  // With when-idle: the share of NVML's sample period (percent) a GPU with
  // another program on it must be busy to count as in use. Default 10.
  int busy_percent = 10;
};

class Server {
 public:
  // Opens the store, starts the finder and the gRPC server.
  static absl::StatusOr<std::unique_ptr<Server>> BuildAndStart(
      const ServerOptions& options);
  // Same, with a finder supplied by the caller (tests).
  static absl::StatusOr<std::unique_ptr<Server>> BuildAndStart(
      const ServerOptions& options, std::unique_ptr<Finder> finder);

  ~Server();

  // A gRPC target for clients: "unix:/path" if a socket is configured (or
  // was passed by systemd), otherwise "host:port" of the TCP listener (with
  // the chosen port).
  std::string address() const;
  // The TCP port actually bound (0 if TCP is off).
  int tcp_port() const { return tcp_port_; }
  // The health-probe port bound (0 if health_address is off).
  int health_port() const { return health_port_; }

  // Stops accepting, lets in-flight calls finish until `drain` has passed,
  // cancels the rest, flushes counters and closes the database.
  void Shutdown(absl::Duration drain);
  // Blocks until Shutdown() completes.
  void Wait();

  TuningCore& core() { return *core_; }

 private:
  Server() = default;
  // Sets the health status of every service on both servers.
  void SetHealth(bool serving);
  // The steps of BuildAndStart, in order.
  // Opens the store (creating its folder) and the fleet tier.
  absl::Status OpenStore();
  // Opens the fleet tier when options_.fleet.url is set (needs store_).
  absl::Status StartFleet();
  // The metrics (when asked for), the tuning core, the fleet job runner and
  // the service.
  absl::Status StartCore();
  // The GpuUse of --miss-searches when-idle (kept in gpu_use_), or null.
  GpuUse* WatchGpuUse();
  // The gRPC server on the listeners of `options` (as the caller gave them,
  // before systemd's sockets replaced the Unix socket in options_).
  absl::Status StartGrpc(
      const ServerOptions& options,
      std::shared_ptr<grpc::ServerCredentials> tcp_credentials);
  // The health-probe server, when options_.health_address is set.
  absl::Status StartHealthServer();
  // Logs the listeners, the devices and the metrics address.
  void LogStarted() const;

  ServerOptions options_;
  std::unique_ptr<Finder> finder_;
  std::unique_ptr<Store> store_;
  // The fleet tier; null without a fleet database. fleet_ before core_ in
  // shutdown order: the job runner, then the core, then the last drain.
  std::unique_ptr<FleetStore> fleet_store_;
  std::unique_ptr<FleetJobs> fleet_jobs_;
  std::unique_ptr<FleetSync> fleet_;
  std::unique_ptr<GpuUse> gpu_use_;  // null: misses searched at once
  std::unique_ptr<TuningCore> core_;
  std::unique_ptr<FleetJobRunner> fleet_job_runner_;
  std::unique_ptr<BackgroundRevalidator> revalidator_;  // stopped before core_
  std::unique_ptr<DaemonMetrics> metrics_;  // reset before core_, service_
  std::unique_ptr<TuneDbService> service_;
  std::unique_ptr<grpc::Server> grpc_server_;
  std::unique_ptr<grpc::Server> health_server_;   // health_address's
  std::unique_ptr<ActivatedListener> activated_;  // activated_sockets
  int tcp_port_ = 0;
  int health_port_ = 0;
  bool shut_down_ = false;
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SERVICE_SERVER_H_
