// What the preload suites (preload_test, preload_graph_test) share: running
// a probe program in a child process with a given environment and reading
// back what it printed, the probe's convolution, and a fixture with a real
// daemon (in-process, simulated finder, over its Unix socket).
//
// Thread safety: for one test thread.
#ifndef TUNEDB_TESTS_PRELOAD_PRELOAD_HARNESS_H_
#define TUNEDB_TESTS_PRELOAD_PRELOAD_HARNESS_H_

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "server/service/server.h"
#include "temp_dir.h"
#include "test_values.h"
#include "tunedb/client.h"

extern char** environ;

namespace tunedb::preload_testing {

struct SpawnResult {
  int exit_code = -1;
  nlohmann::json out;  // stdout parsed as JSON, or discarded if it is not
  std::string err;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// How many children Spawn started so far in this process.
inline int& SpawnCount() {
  static int count = 0;
  return count;
}

// Runs `argv` with this process's environment plus `env` (each replacing
// its namesake; a later one wins), stdout and stderr to files "outN" and
// "outN.err" in `dir` (N = SpawnCount() after the run).
inline SpawnResult Spawn(const testing_util::TempDir& dir,
                         std::vector<std::string> argv,
                         const std::vector<std::string>& env) {
  const std::string out_path = dir.File("out" + std::to_string(++SpawnCount()));
  const std::string err_path = out_path + ".err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> envs;
  auto name_of = [](const std::string& e) { return e.substr(0, e.find('=')); };
  for (char** e = environ; *e != nullptr; ++e) envs.push_back(*e);
  for (const std::string& add : env) {
    envs.erase(std::remove_if(envs.begin(), envs.end(),
                              [&](const std::string& e) {
                                return name_of(e) == name_of(add);
                              }),
               envs.end());
    envs.push_back(add);
  }
  std::vector<char*> envp, args;
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  SpawnResult run;
  const int rc =
      posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0) << "cannot start " << argv[0];
  if (rc != 0) return run;
  int status = 0;
  waitpid(pid, &status, 0);
  run.exit_code =
      WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.err = ReadFile(err_path);
  run.out = nlohmann::json::parse(ReadFile(out_path), nullptr,
                                  /*allow_exceptions=*/false);
  return run;
}

// The probes' problem: 32 x 64 -> 64 channels, 56x56, 3x3, stride 2, pad 1
// (stride 2 leaves the simulated finder's unit-stride algorithms out, so the
// fastest one is not deterministic and a tuned list has several entries).
inline const std::vector<std::string> kShape = {
    "--n", "32",     "--c", "64",       "--k", "64",    "--hw",
    "56",  "--filt", "3",   "--stride", "2",   "--pad", "1"};

// A daemon for each test, and its device key (the probes' TUNEDB_DEVICE_KEY).
class PreloadDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.unix_socket = dir_.File("d.sock");
    options.store.path = ":memory:";
    options.finder = "simulated";
    absl::StatusOr<std::unique_ptr<Server>> server =
        Server::BuildAndStart(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    device_ = server_->core().devices().at(0).key;
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown(absl::Seconds(1));
  }

  // The probes' problem as a (legacy-API) key of pass `op` on the daemon's
  // device.
  ProblemKey ProbeKey(ConvOp op) const {
    ProblemKey key;
    key.device = device_;
    key.problem = testing_util::TestProblem(32, 64, 64, 56, 3, 2);
    key.problem.op = op;
    return key;
  }

  // A client of the daemon that has it search a miss and waits (`tune`), or
  // one that only looks up what is stored.
  // The daemon's record for `key`, if it has one (read from its store: no
  // lookup that could ask for a tune).
  std::optional<Record> Stored(const ProblemKey& key) {
    absl::StatusOr<std::optional<Record>> r = server_->core().store().Get(key);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : std::nullopt;
  }

  std::unique_ptr<Client> DaemonClient(bool tune) const {
    ClientOptions o;
    o.address = server_->address();
    if (tune) {
      o.miss_policy = MissPolicy::kTuneAndWait;
      o.tune_deadline = absl::Seconds(30);
    } else {
      o.lookup_deadline = absl::Seconds(5);
    }
    return Client::Create(o).value();
  }

  testing_util::TempDir dir_;
  std::unique_ptr<Server> server_;
  DeviceKey device_;
};

}  // namespace tunedb::preload_testing

#endif  // TUNEDB_TESTS_PRELOAD_PRELOAD_HARNESS_H_
