#include "server/service/daemon_config.h"

#include <cmath>

#include "absl/time/time.h"

namespace tunedb {

namespace {

// The config file and where the daemon listens: its Unix socket and TCP
// listener with TLS.
void AddListenerFlags(CLI::App& app, DaemonConfig* c) {
  ServerOptions& s = c->server;
  app.set_config("--config", "",
                 "Config file of 'name = value' lines (same names as the "
                 "long flags)");
  app.add_option("--socket", s.unix_socket,
                 "Unix socket to listen on (mode 0660); '' disables it")
      ->capture_default_str();
  app.add_option("--listen", s.tcp_address,
                 "Also listen on TCP host:port (off unless given; needs "
                 "--tls-cert and --tls-key, or --insecure-tcp)");
  app.add_option("--tls-cert", s.tls.cert_file,
                 "PEM certificate chain of the TCP listener");
  app.add_option("--tls-key", s.tls.key_file, "PEM private key of --tls-cert");
  app.add_option("--tls-client-ca", s.tls.client_ca_file,
                 "PEM CA bundle: TCP clients must present a certificate it "
                 "signed (mTLS; off unless given)");
  app.add_flag("--insecure-tcp", s.insecure_tcp,
               "Serve --listen as plain TCP, without TLS (logged as a "
               "warning)");
}

// The database and what measures: the finder, its workers and cuDNN.
void AddStoreAndFinderFlags(CLI::App& app, DaemonConfig* c) {
  ServerOptions& s = c->server;
  s.store.path = "/var/lib/tunedb/tunedb.db";
  app.add_option("--db", s.store.path, "SQLite database file")
      ->capture_default_str();
  app.add_option("--synchronous", s.store.synchronous,
                 "SQLite synchronous level: FULL or NORMAL")
      ->check(CLI::IsMember({"FULL", "NORMAL"}))
      ->capture_default_str();
  app.add_option("--finder", s.finder,
                 "cudnn (GPU worker processes), simulated (test double, "
                 "in process) or simulated-workers (test double in worker "
                 "processes)")
      ->check(CLI::IsMember({"cudnn", "simulated", "simulated-workers"}))
      ->capture_default_str();
  app.add_option("--simulated", s.simulated_options,
                 "Simulated finder options, e.g. 'devices=2;slow_ms=20'");
  app.add_option("--worker", s.worker_path,
                 "tunedb-worker program (default: next to tunedbd)");
  app.add_option("--cudnn-lib-dir", s.cudnn_library_dirs,
                 "cuDNN library folder; repeat to serve several cuDNN "
                 "versions (one worker per GPU and folder)");
}

// When and how searches run: the queues, the workspace, a miss's search
// and the timeouts.
void AddSearchFlags(CLI::App& app, DaemonConfig* c) {
  ServerOptions& s = c->server;
  app.add_option("--queue-capacity", s.core.queue_capacity,
                 "Searches queued per GPU before RESOURCE_EXHAUSTED")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--workspace-cap", s.core.search.workspace_cap_bytes,
                 "Largest workspace offered to algorithms, bytes (-1: a "
                 "share of free GPU memory)")
      ->capture_default_str();
  app.add_option("--miss-searches", s.miss_searches,
                 "when-idle: a search a program's miss asks for waits until "
                 "no program uses the GPU (or goes to an idle GPU of the "
                 "model); at-once: it runs as soon as it is queued")
      ->check(CLI::IsMember({"when-idle", "at-once"}))
      ->capture_default_str();
  app.add_option("--busy-percent", s.busy_percent,
                 "With when-idle: how busy (percent of NVML's sample period) "
                 "a GPU with another program on it counts as in use")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--predict-max-distance", s.core.predict_max_distance,
                 "A Lookup that asks for a prediction is answered from the "
                 "nearest tuned shapes only where the nearest is at most this "
                 "far (sum of |ln ratio| over batch, channels and sizes)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--idle-quiet", c->idle_quiet_seconds,
                 "With when-idle: seconds a GPU must have been idle, without "
                 "a break, before a program's miss is searched on it (a "
                 "program building the plans of a new input size looks idle "
                 "for a moment)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--search-timeout", c->search_timeout_seconds,
                 "Seconds one search may take before its worker is killed")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--drain", c->drain_seconds,
                 "Seconds in-flight work may take after SIGTERM/SIGINT")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
}

// The health and metrics endpoints and the host name of records.
void AddEndpointFlags(CLI::App& app, DaemonConfig* c) {
  ServerOptions& s = c->server;
  app.add_option("--health-listen", s.health_address,
                 "Plain TCP host:port serving only grpc.health.v1, for "
                 "probes such as Kubernetes' (off unless given)");
  app.add_option("--metrics-address", s.metrics_address,
                 "Serve Prometheus metrics on http://host:port/metrics; a "
                 "bare port means 127.0.0.1:PORT (off unless given)");
  app.add_option("--host-name", s.core.host,
                 "Host name stored with each record (default: hostname)");
}

// The fleet database, its leases and jobs, and revalidation on start.
void AddFleetFlags(CLI::App& app, DaemonConfig* c) {
  ServerOptions& s = c->server;
  app.add_option("--fleet", s.fleet.url,
                 "Fleet database: a PostgreSQL URL or conninfo shared by "
                 "the hosts of one GPU model (docs/fleet.md); off unless "
                 "given");
  app.add_option("--fleet-password-file", s.fleet.password_file,
                 "libpq password file for the fleet database (default: "
                 "PGPASSFILE or ~/.pgpass)");
  app.add_option("--fleet-lease", c->fleet_lease_seconds,
                 "Seconds a fleet lease on a search or a prewarm job lasts "
                 "unless renewed (a dead host's work moves on after it)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--fleet-jobs", s.fleet_jobs,
                 "Run fleet prewarm jobs for this host's GPUs")
      ->capture_default_str();
  app.add_option("--revalidate-on-start", s.revalidate_on_start,
                 "Make the records this host's cuDNN versions lack from "
                 "older versions' records of the same GPU model, in the "
                 "background, by re-timing their choices "
                 "(docs/revalidation.md)")
      ->capture_default_str();
}

}  // namespace

void AddDaemonFlags(CLI::App& app, DaemonConfig* c) {
  AddListenerFlags(app, c);
  AddStoreAndFinderFlags(app, c);
  AddSearchFlags(app, c);
  AddEndpointFlags(app, c);
  AddFleetFlags(app, c);
  app.add_option("--log-level", c->log_level, "Log level")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}))
      ->capture_default_str();
}

void FinishDaemonConfig(DaemonConfig* c) {
  c->server.fleet_sync.lease =
      absl::Milliseconds(std::llround(c->fleet_lease_seconds * 1000));
  c->server.core.search.timeout =
      absl::Milliseconds(std::llround(c->search_timeout_seconds * 1000));
  c->server.core.idle_quiet =
      absl::Milliseconds(std::llround(c->idle_quiet_seconds * 1000));
}

}  // namespace tunedb
