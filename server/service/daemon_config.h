// DaemonConfig: tunedbd's command line and optional config file (INI/TOML
// `key = value` lines with the same names as the long flags), turned into
// ServerOptions. Flags override the file.
//
// Thread safety: plain functions over caller-owned objects.
#ifndef TUNEDB_SERVER_SERVICE_DAEMON_CONFIG_H_
#define TUNEDB_SERVER_SERVICE_DAEMON_CONFIG_H_

#include <string>

#include "CLI/CLI.hpp"
#include "server/service/server.h"

namespace tunedb {

struct DaemonConfig {
  ServerOptions server;
  // Seconds that in-flight work may take after SIGTERM/SIGINT. Default 30.
  double drain_seconds = 30;
  // Per-search timeout in seconds. Default 300.
  double search_timeout_seconds = 300;
  // Fleet lease on a searched key and on a prewarm job, seconds. Default 30.
  double fleet_lease_seconds = 30;
  // With --miss-searches when-idle: how long a GPU must have been idle
  // before a program's miss is searched on it (TuningCore's idle_quiet).
  double idle_quiet_seconds = 3;
  // "trace", "debug", "info" (default), "warn", "error".
  std::string log_level = "info";
};

// Registers every flag (and --config) on `app`, writing into `config`.
void AddDaemonFlags(CLI::App& app, DaemonConfig* config);

// Copies the parsed scalar flags into config->server (call after parsing).
void FinishDaemonConfig(DaemonConfig* config);

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SERVICE_DAEMON_CONFIG_H_
