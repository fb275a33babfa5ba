// tunedbd: the tunedb daemon. See `tunedbd --help` and README.md.
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/service/daemon_config.h"
#include "server/service/server.h"
#include "server/service/systemd_notifier.h"
#include "server/service/systemd_sockets.h"
#include "spdlog/spdlog.h"

namespace {

// The STATUS= line: searches waiting or running, per device.
std::string InFlightStatus(tunedb::TuningCore& core) {
  const int devices = static_cast<int>(core.devices().size());
  int total = 0;
  std::vector<std::string> busy;
  for (int i = 0; i < devices; ++i) {
    const int depth = core.QueueDepth(i);
    total += depth;
    if (depth > 0) busy.push_back(absl::StrCat("device ", i, ": ", depth));
  }
  std::string text = absl::StrCat("serving on ", devices, " device(s); ");
  if (total == 0) return text + "no searches in flight";
  return absl::StrCat(text, total, " search(es) in flight (",
                      absl::StrJoin(busy, ", "), ")");
}

}  // namespace

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

  // Socket activation (tunedbd.socket): systemd's sockets replace --socket.
  absl::StatusOr<std::vector<int>> activated = tunedb::TakeSystemdSockets();
  if (!activated.ok()) {
    spdlog::critical("tunedbd could not start: {}",
                     activated.status().ToString());
    return 1;
  }
  config.server.activated_sockets = *std::move(activated);

  auto server = tunedb::Server::BuildAndStart(config.server);
  if (!server.ok()) {
    spdlog::critical("tunedbd could not start: {}", server.status().ToString());
    return 1;
  }
  // Serving: this thread tells systemd (when it started us) that we are
  // ready, what is in flight and, with WatchdogSec=, that we are alive.
  tunedb::SystemdNotifier notifier{tunedb::SystemdNotifier::Options()};
  tunedb::TuningCore& core = (*server)->core();
  notifier.Ready(InFlightStatus(core));
  absl::Duration tick = absl::Milliseconds(250);
  if (notifier.watchdog_interval() > absl::ZeroDuration()) {
    tick = std::min(tick, notifier.watchdog_interval() / 2);
  }
  const timespec wait = absl::ToTimespec(tick);
  int sig = -1;
  while (sig < 0) {
    sig = sigtimedwait(&signals, nullptr, &wait);
    notifier.Watchdog();
    if (sig < 0) notifier.Status(InFlightStatus(core));
  }
  spdlog::info("received signal {}", sig);
  notifier.Stopping(
      absl::StrCat("draining (up to ", config.drain_seconds, " s)"));
  (*server)->Shutdown(absl::Milliseconds(config.drain_seconds * 1000));
  return 0;
}
