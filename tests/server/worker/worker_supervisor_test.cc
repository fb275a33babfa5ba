// WorkerSupervisor against real tunedb-worker processes running the simulated
// finder: device listing, searches through the pipe, crash and hang recovery,
// per-device parallelism.
#include "server/worker/worker_supervisor.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "common/record_results.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/finder/simulated_finder.h"
#include "tests/testing/test_values.h"
#include "tests/testing/worker_path.h"

namespace tunedb {
namespace {

using ::testing::HasSubstr;

ConvProblem Problem(int64_t n) {
  return testing_util::TestProblem(n, 64, 64, /*hw=*/56);
}

std::unique_ptr<WorkerSupervisor> MakeSupervisor(
    const std::string& sim, std::vector<std::string> dirs = {}) {
  WorkerSupervisor::Options options;
  options.worker_path = WorkerPath();
  options.worker_finder = "simulated";
  options.simulated_options = sim;
  options.library_dirs = std::move(dirs);
  options.start_timeout = absl::Seconds(30);
  absl::StatusOr<std::unique_ptr<WorkerSupervisor>> f =
      WorkerSupervisor::Create(options);
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? std::move(*f) : nullptr;
}

SearchOptions Timeout(absl::Duration d) {
  SearchOptions o;
  o.timeout = d;
  return o;
}

TEST(WorkerSupervisorTest, ListsOneDevicePerWorker) {
  auto supervisor = MakeSupervisor("devices=2");
  ASSERT_NE(supervisor, nullptr);
  EXPECT_EQ(supervisor->Name(), "simulated");
  absl::StatusOr<std::vector<DeviceInfo>> devices = supervisor->Devices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->size(), 2u);
  EXPECT_EQ((*devices)[0].key.gpu_model, "Simulated GPU");
  EXPECT_EQ((*devices)[0].key.cudnn_version, 91900);
  EXPECT_GT(supervisor->worker_pid(0), 0);
  EXPECT_GT(supervisor->worker_pid(1), 0);
  EXPECT_NE(supervisor->worker_pid(0), supervisor->worker_pid(1));
  EXPECT_NE(supervisor->worker_pid(0), getpid());
}

TEST(WorkerSupervisorTest, OneWorkerSetPerLibraryDir) {
  auto supervisor =
      MakeSupervisor("devices=2", {"/nonexistent/a", "/nonexistent/b"});
  ASSERT_NE(supervisor, nullptr);
  absl::StatusOr<std::vector<DeviceInfo>> devices = supervisor->Devices();
  ASSERT_TRUE(devices.ok());
  ASSERT_EQ(devices->size(), 4u);
  EXPECT_EQ(supervisor->library_dir(0), "/nonexistent/a");
  EXPECT_EQ(supervisor->library_dir(1), "/nonexistent/a");
  EXPECT_EQ(supervisor->library_dir(2), "/nonexistent/b");
  EXPECT_EQ((*devices)[2].ordinal, 0);
  EXPECT_EQ((*devices)[3].ordinal, 1);
}

TEST(WorkerSupervisorTest, SearchMatchesTheInProcessModel) {
  auto supervisor = MakeSupervisor("devices=1");
  ASSERT_NE(supervisor, nullptr);
  const ConvProblem p = Problem(32);
  absl::StatusOr<SearchResult> r =
      supervisor->Search(0, p, Timeout(absl::Seconds(30)));
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<AlgoResult> expected = SimulatedFinder::Model(p);
  SortResults(expected);
  ASSERT_EQ(r->results.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(r->results[i].algo, expected[i].algo) << i;
    EXPECT_EQ(r->results[i].status, expected[i].status) << i;
    EXPECT_DOUBLE_EQ(r->results[i].launch.median_ms,
                     expected[i].launch.median_ms)
        << i;
    EXPECT_EQ(r->results[i].workspace_bytes, expected[i].workspace_bytes) << i;
  }
}

TEST(WorkerSupervisorTest, BadIndexIsInvalidArgument) {
  auto supervisor = MakeSupervisor("devices=1");
  ASSERT_NE(supervisor, nullptr);
  EXPECT_EQ(supervisor->Search(1, Problem(8), Timeout(absl::Seconds(5)))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(WorkerSupervisorTest, CrashIsUnavailableAndTheWorkerRestarts) {
  auto supervisor = MakeSupervisor("devices=1;crash_n=7");
  ASSERT_NE(supervisor, nullptr);
  const pid_t before = supervisor->worker_pid(0);
  absl::StatusOr<SearchResult> r =
      supervisor->Search(0, Problem(7), Timeout(absl::Seconds(30)));
  ASSERT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("signal"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("restarted"));
  EXPECT_EQ(supervisor->restarts(0), 1);
  EXPECT_NE(supervisor->worker_pid(0), before);
  absl::StatusOr<SearchResult> next =
      supervisor->Search(0, Problem(8), Timeout(absl::Seconds(30)));
  EXPECT_TRUE(next.ok()) << next.status();
}

TEST(WorkerSupervisorTest, HangIsKilledAtTheTimeoutAndTheNextSearchWorks) {
  auto supervisor = MakeSupervisor("devices=1;hang_n=9");
  ASSERT_NE(supervisor, nullptr);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<SearchResult> r =
      supervisor->Search(0, Problem(9), Timeout(absl::Milliseconds(800)));
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded)
      << r.status();
  EXPECT_GE(s, 0.75);
  EXPECT_LT(s, 5.0);  // the timeout plus a worker restart
  absl::StatusOr<SearchResult> next =
      supervisor->Search(0, Problem(8), Timeout(absl::Seconds(30)));
  EXPECT_TRUE(next.ok()) << next.status();
}

TEST(WorkerSupervisorTest, SupervisionCountsStartsAndExitsByReason) {
  auto supervisor = MakeSupervisor("devices=1;crash_n=7;hang_n=9");
  ASSERT_NE(supervisor, nullptr);
  EXPECT_EQ(supervisor->supervision(0).starts, 1);
  EXPECT_TRUE(supervisor->supervision(0).exits.empty());
  EXPECT_FALSE(
      supervisor->Search(0, Problem(7), Timeout(absl::Seconds(30))).ok());
  EXPECT_FALSE(
      supervisor->Search(0, Problem(9), Timeout(absl::Milliseconds(500))).ok());
  EXPECT_TRUE(
      supervisor->Search(0, Problem(8), Timeout(absl::Seconds(30))).ok());
  const WorkerSupervisor::Supervision sup = supervisor->supervision(0);
  EXPECT_EQ(sup.starts, 3);  // the first, after the crash, after the hang
  EXPECT_EQ(sup.exits.at("died"), 1);
  EXPECT_EQ(sup.exits.at("timeout"), 1);
  EXPECT_EQ(sup.exits.count("fatal_error"), 0u);
}

TEST(WorkerSupervisorTest, KilledWorkerIsReportedWithItsSignal) {
  auto supervisor = MakeSupervisor("devices=1;slow_ms=3000");
  ASSERT_NE(supervisor, nullptr);
  const pid_t pid = supervisor->worker_pid(0);
  std::thread killer([pid] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::kill(pid, SIGKILL);
  });
  absl::StatusOr<SearchResult> r =
      supervisor->Search(0, Problem(8), Timeout(absl::Seconds(30)));
  killer.join();
  ASSERT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("signal 9"));
  EXPECT_TRUE(
      supervisor->Search(0, Problem(8), Timeout(absl::Seconds(30))).ok());
}

TEST(WorkerSupervisorTest, DifferentDevicesSearchInParallel) {
  auto supervisor = MakeSupervisor("devices=2;slow_ms=500");
  ASSERT_NE(supervisor, nullptr);
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  ASSERT_TRUE(
      supervisor->Search(0, Problem(1), Timeout(absl::Seconds(30))).ok());
  ASSERT_TRUE(
      supervisor->Search(0, Problem(2), Timeout(absl::Seconds(30))).ok());
  const double serial =
      std::chrono::duration<double>(Clock::now() - t0).count();

  t0 = Clock::now();
  absl::Status s0, s1;
  std::thread a([&] {
    s0 = supervisor->Search(0, Problem(3), Timeout(absl::Seconds(30))).status();
  });
  std::thread b([&] {
    s1 = supervisor->Search(1, Problem(4), Timeout(absl::Seconds(30))).status();
  });
  a.join();
  b.join();
  const double parallel =
      std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_TRUE(s0.ok()) << s0;
  EXPECT_TRUE(s1.ok()) << s1;
  EXPECT_GE(serial, 1.0);
  EXPECT_LT(parallel, 0.75 * serial)
      << "serial " << serial << " s, parallel " << parallel << " s";
}

TEST(WorkerSupervisorTest, MissingWorkerProgramIsFailedPrecondition) {
  WorkerSupervisor::Options options;
  options.worker_path = "/nonexistent/tunedb-worker";
  options.worker_finder = "simulated";
  EXPECT_EQ(WorkerSupervisor::Create(options).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(WorkerSupervisorTest, BadSimulatedOptionsFailCreate) {
  WorkerSupervisor::Options options;
  options.worker_path = WorkerPath();
  options.worker_finder = "simulated";
  options.simulated_options = "no_such_switch=1";
  absl::StatusOr<std::unique_ptr<WorkerSupervisor>> f =
      WorkerSupervisor::Create(options);
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(std::string(f.status().message()), HasSubstr("no_such_switch"));
}

}  // namespace
}  // namespace tunedb
