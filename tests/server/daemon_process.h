// DaemonProcess: a real tunedbd started with posix_spawn for the suites that
// test the daemon as a process (its database and socket in a TempDir, the
// simulated finders, the worker from the build), plus Tune over its socket.
// The daemon is killed (SIGKILL) if the test has not stopped it.
//
// Thread safety: one test thread owns a DaemonProcess; Connect() may be
// called from several threads.
#ifndef TUNEDB_TESTS_SERVER_DAEMON_PROCESS_H_
#define TUNEDB_TESTS_SERVER_DAEMON_PROCESS_H_

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/server/test_util.h"
#include "tunedb/v1/tunedb.grpc.pb.h"

extern char** environ;

namespace tunedb::testing_util {

class DaemonProcess {
 public:
  // `extra` are flags after the defaults; `launcher`, if given, runs the
  // daemon (e.g. prlimit with its flags); `env` entries ("NAME=value") are
  // added to this process's environment.
  DaemonProcess(const TempDir& dir, std::vector<std::string> extra,
                std::vector<std::string> launcher = {},
                std::vector<std::string> env = {}) {
    socket_ = dir.File("d.sock");
    std::vector<std::string> args = std::move(launcher);
    for (std::string a :
         {std::string(TUNEDBD_PATH), std::string("--db"), dir.File("d.db"),
          std::string("--socket"), socket_, std::string("--log-level"),
          std::string("warn"), std::string("--worker"),
          std::string(TUNEDB_WORKER_PATH)}) {
      args.push_back(std::move(a));
    }
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (char** e = environ; *e != nullptr; ++e) envp.push_back(*e);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    int rc =
        posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), envp.data());
    EXPECT_EQ(rc, 0) << "posix_spawn tunedbd failed";
  }
  ~DaemonProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  std::unique_ptr<v1::TuneDb::Stub> Connect() {
    // Retry the connection every few ms while the daemon starts, not after
    // gRPC's default one-second backoff.
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 20);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 20);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 100);
    auto channel = grpc::CreateCustomChannel(
        "unix:" + socket_, grpc::InsecureChannelCredentials(), args);
    EXPECT_TRUE(channel->WaitForConnected(std::chrono::system_clock::now() +
                                          std::chrono::seconds(20)))
        << "tunedbd did not come up";
    return v1::TuneDb::NewStub(channel);
  }

  // Sends `sig` and waits; returns the wait status.
  int Stop(int sig) {
    kill(pid_, sig);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

  const std::string& socket() const { return socket_; }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::string socket_;
};

// Tunes ProtoProblem(n) with a 10 s deadline.
inline grpc::Status Tune(v1::TuneDb::Stub* stub, int64_t n,
                         v1::TuneResponse* resp) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::TuneRequest req;
  *req.mutable_problem() = ProtoProblem(n);
  return stub->Tune(&ctx, req, resp);
}

// Runs a command line to its exit; its stdout (stderr too with
// `with_stderr`) and exit code.
inline std::string RunToExit(const std::string& command, int* exit_code,
                             bool with_stderr = false) {
  FILE* pipe =
      popen((command + (with_stderr ? " 2>&1" : " 2>/dev/null")).c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  int status = pclose(pipe);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

}  // namespace tunedb::testing_util

#endif  // TUNEDB_TESTS_SERVER_DAEMON_PROCESS_H_
