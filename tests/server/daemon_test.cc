// tunedbd as a process: kill -9 in the middle of a write storm loses no
// acknowledged write and leaves a sound database; SIGTERM shuts down
// cleanly; a crashing search worker fails one request, not the daemon.
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "store/store.h"
#include "test_util.h"
#include "tunedb/v1/tunedb.grpc.pb.h"

extern char** environ;

namespace tunedb {
namespace {

using testing_util::ProtoProblem;
using testing_util::TempDir;
using testing_util::TestProblem;

class Daemon {
 public:
  // `launcher`, if given, runs the daemon (e.g. prlimit with its flags).
  Daemon(const TempDir& dir, std::vector<std::string> extra,
         std::vector<std::string> launcher = {}) {
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
    int rc =
        posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ);
    EXPECT_EQ(rc, 0) << "posix_spawn tunedbd failed";
  }
  ~Daemon() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  std::unique_ptr<v1::TuneDb::Stub> Connect() {
    auto channel = grpc::CreateChannel("unix:" + socket_,
                                       grpc::InsecureChannelCredentials());
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

 private:
  pid_t pid_ = -1;
  std::string socket_;
};

grpc::Status Tune(v1::TuneDb::Stub* stub, int64_t n, v1::TuneResponse* resp) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::TuneRequest req;
  *req.mutable_problem() = ProtoProblem(n);
  return stub->Tune(&ctx, req, resp);
}

TEST(DaemonTest, KillNineDuringWriteStormLosesNoAcknowledgedWrite) {
  TempDir dir;
  std::set<int64_t> acknowledged;
  std::atomic<int64_t> next_n{1};
  v1::DeviceKey device;
  for (int round = 0; round < 3; ++round) {
    Daemon daemon(dir, {"--finder", "simulated"});
    auto stub = daemon.Connect();
    std::mutex mu;
    std::atomic<bool> stop{false};
    std::vector<std::thread> writers;
    for (int t = 0; t < 4; ++t) {
      writers.emplace_back([&] {
        while (!stop.load()) {
          int64_t n = next_n.fetch_add(1);
          v1::TuneResponse resp;
          if (Tune(stub.get(), n, &resp).ok()) {
            std::lock_guard<std::mutex> lock(mu);
            acknowledged.insert(n);
            device = resp.record().device();
          }
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    int status = daemon.Stop(SIGKILL);
    EXPECT_TRUE(WIFSIGNALED(status));
    stop = true;
    for (auto& w : writers) w.join();
  }
  ASSERT_GT(acknowledged.size(), 10u) << "the storm wrote too little to test";

  Store::Options options;
  options.path = dir.File("d.db");
  auto store = Store::Open(options);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_TRUE((*store)->QuickCheck().ok());
  absl::StatusOr<DeviceKey> key_device = FromProto(device);
  ASSERT_TRUE(key_device.ok()) << key_device.status();
  int missing = 0;
  for (int64_t n : acknowledged) {
    auto r = (*store)->Get(ProblemKey{*key_device, TestProblem(n)});
    ASSERT_TRUE(r.ok()) << r.status();
    if (!r->has_value()) ++missing;
  }
  EXPECT_EQ(missing, 0) << "of " << acknowledged.size() << " acknowledged";
}

TEST(DaemonTest, SigtermShutsDownCleanlyAndDataPersists) {
  TempDir dir;
  {
    Daemon daemon(dir, {"--finder", "simulated"});
    auto stub = daemon.Connect();
    for (int64_t n = 1; n <= 3; ++n) {
      v1::TuneResponse resp;
      ASSERT_TRUE(Tune(stub.get(), n, &resp).ok());
    }
    int status = daemon.Stop(SIGTERM);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    struct stat st;
    EXPECT_NE(stat(daemon.socket().c_str(), &st), 0) << "socket left behind";
  }
  Daemon daemon(dir, {"--finder", "simulated"});
  auto stub = daemon.Connect();
  v1::TuneResponse resp;
  ASSERT_TRUE(Tune(stub.get(), 2, &resp).ok());
  EXPECT_FALSE(resp.searched()) << "the record did not survive the restart";
  grpc::ClientContext ctx;
  v1::StatsResponse stats;
  ASSERT_TRUE(stub->Stats(&ctx, v1::StatsRequest(), &stats).ok());
  EXPECT_EQ(stats.records(), 3);
}

TEST(DaemonTest, SocketIsGroupAccessibleOnly) {
  TempDir dir;
  Daemon daemon(dir, {"--finder", "simulated"});
  daemon.Connect();
  struct stat st;
  ASSERT_EQ(stat(daemon.socket().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660);
}

TEST(DaemonTest, CrashingWorkerFailsOneRequestNotTheDaemon) {
  TempDir dir;
  struct stat st;
  if (stat(TUNEDB_WORKER_PATH, &st) != 0) {
    GTEST_SKIP() << "tunedb-worker was not built";
  }
  Daemon daemon(dir,
                {"--finder", "simulated-workers", "--simulated", "crash_n=13"});
  auto stub = daemon.Connect();
  v1::TuneResponse resp;
  grpc::Status crashed = Tune(stub.get(), 13, &resp);
  EXPECT_EQ(crashed.error_code(), grpc::StatusCode::UNAVAILABLE)
      << crashed.error_message();
  v1::TuneResponse ok;
  grpc::Status s = Tune(stub.get(), 8, &ok);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(ok.record().finder(), "simulated");
}

// A full disk, as a file-size limit (ulimit -f) makes one: the search whose
// result cannot be stored fails with a code that says "do not retry" (not
// RESOURCE_EXHAUSTED, the API's "queue full, retry later"), it counts as a
// failed search, and the daemon keeps serving instead of dying of SIGXFSZ.
TEST(DaemonTest, FullDiskFailsTheSearchNotTheDaemonAndIsNotRetryable) {
  constexpr char kPrlimit[] = "/usr/bin/prlimit";
  if (access(kPrlimit, X_OK) != 0) GTEST_SKIP() << "no " << kPrlimit;
  TempDir dir;
  Daemon daemon(dir, {"--finder", "simulated"},
                {kPrlimit, "--fsize=196608"});  // 192 KiB per file
  auto stub = daemon.Connect();
  grpc::Status failed;
  int64_t stored = 0;
  for (int64_t n = 1; n <= 5000 && failed.ok(); ++n) {
    v1::TuneResponse resp;
    grpc::Status s = Tune(stub.get(), n, &resp);
    if (s.ok()) {
      ++stored;
    } else {
      failed = s;
    }
  }
  ASSERT_FALSE(failed.ok()) << "the file-size limit was never reached ("
                            << stored << " records stored)";
  EXPECT_GT(stored, 0);
  EXPECT_TRUE(failed.error_code() == grpc::StatusCode::FAILED_PRECONDITION ||
              failed.error_code() == grpc::StatusCode::INTERNAL)
      << failed.error_code() << ": " << failed.error_message();
  EXPECT_NE(failed.error_message().find("could not be stored"),
            std::string::npos)
      << failed.error_message();

  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::StatsRequest request;
  v1::StatsResponse stats;
  grpc::Status alive = stub->Stats(&ctx, request, &stats);
  ASSERT_TRUE(alive.ok()) << "the daemon died: " << alive.error_message();
  EXPECT_EQ(stats.searches(), stored);
  EXPECT_EQ(stats.search_failures(), 1);
  // What was stored before the disk filled is still served.
  v1::TuneResponse again;
  EXPECT_TRUE(Tune(stub.get(), 1, &again).ok());
  EXPECT_FALSE(again.searched());
}

TEST(DaemonTest, ConfigFileIsReadAndFlagsOverrideIt) {
  TempDir dir;
  {
    std::ofstream config(dir.File("tunedbd.conf"));
    config << "# test config\n"
           << "finder = simulated\n"
           << "simulated = \"devices=2\"\n"
           << "socket = " << dir.File("ignored.sock") << "\n";
  }
  // The Daemon helper passes --socket, which must win over the file.
  Daemon daemon(dir, {"--config", dir.File("tunedbd.conf")});
  auto stub = daemon.Connect();
  grpc::ClientContext ctx;
  v1::DevicesResponse devices;
  ASSERT_TRUE(stub->Devices(&ctx, v1::DevicesRequest(), &devices).ok());
  EXPECT_EQ(devices.finder(), "simulated");
  EXPECT_EQ(devices.devices_size(), 2);
  struct stat st;
  EXPECT_NE(stat(dir.File("ignored.sock").c_str(), &st), 0);
}

TEST(DaemonTest, BadFlagsExitWithAMessage) {
  TempDir dir;
  Daemon daemon(dir, {"--finder", "bogus"});
  int status = daemon.Stop(0);  // just wait
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace tunedb
