// StartServer: the real daemon in process for the client suites that talk
// to it (simulated finder, in-memory store, on a Unix socket).
#ifndef TUNEDB_TESTS_CLIENT_TEST_SERVER_H_
#define TUNEDB_TESTS_CLIENT_TEST_SERVER_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "server/service/server.h"
#include "server/tuning/gpu_use.h"

namespace tunedb::client_test {

// `simulated`: SimulatedFinder options ("" for its defaults); `gpu_use`
// (must outlive the server): which GPUs programs use, for when-idle
// searches, asked every 10 ms with no quiet period (null: searches run at
// once, as with the simulated finder). Null after a test failure if the
// daemon does not start.
inline std::unique_ptr<Server> StartServer(const std::string& socket,
                                           const std::string& simulated = "",
                                           GpuUse* gpu_use = nullptr) {
  ServerOptions options;
  options.core.gpu_use = gpu_use;
  options.core.idle_poll = absl::Milliseconds(10);
  options.core.idle_quiet = absl::ZeroDuration();
  options.unix_socket = socket;
  options.store.path = ":memory:";
  options.finder = "simulated";
  options.simulated_options = simulated;
  absl::StatusOr<std::unique_ptr<Server>> server =
      Server::BuildAndStart(options);
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

}  // namespace tunedb::client_test

#endif  // TUNEDB_TESTS_CLIENT_TEST_SERVER_H_
