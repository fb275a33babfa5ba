// tunedbd: the tunedb daemon. See `tunedbd --help` and README.md.
#include <signal.h>

#include <cstdio>

#include "CLI/CLI.hpp"
#include "server/service/daemon_config.h"
#include "server/service/server.h"
#include "spdlog/spdlog.h"

int main(int argc, char** argv) {
  tunedb::DaemonConfig config;
  CLI::App app{
      "tunedbd: persistent cuDNN convolution autotuning daemon.\n"
      "Serves the tunedb.v1.TuneDb gRPC API, searches on this host's GPUs "
      "and stores every measured algorithm in SQLite."};
  tunedb::AddDaemonFlags(app, &config);
  CLI11_PARSE(app, argc, argv);
  tunedb::FinishDaemonConfig(&config);
  spdlog::set_level(spdlog::level::from_str(config.log_level));

  // Signals are taken by sigwait on this thread; block them before any
  // other thread starts so none of them receives one.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // Past a file-size limit (ulimit -f) a write fails with EFBIG, which the
  // store reports, instead of the signal killing the daemon silently.
  signal(SIGXFSZ, SIG_IGN);

  auto server = tunedb::Server::BuildAndStart(config.server);
  if (!server.ok()) {
    spdlog::critical("tunedbd could not start: {}", server.status().ToString());
    return 1;
  }
  int sig = 0;
  sigwait(&signals, &sig);
  spdlog::info("received signal {}", sig);
  (*server)->Shutdown(absl::Milliseconds(config.drain_seconds * 1000));
  return 0;
}
