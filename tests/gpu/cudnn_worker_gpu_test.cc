// WorkerSupervisor with cuDNN workers on a real GPU: the worker's device key is
// the runtime's, a worker killed with SIGKILL in the middle of a search is
// reported and replaced, and two cuDNN library folders give two distinct
// DeviceKeys (TUNEDB_TEST_CUDNN_DIRS="dirA:dirB"; skipped when unset).
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "cudnn/cudnn_device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/worker/worker_supervisor.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/testing/worker_path.h"

namespace tunedb {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<std::unique_ptr<WorkerSupervisor>> CudnnWorkers(
    std::vector<std::string> dirs = {}) {
  WorkerSupervisor::Options options;
  options.worker_path = WorkerPath();
  options.worker_finder = "cudnn";
  options.library_dirs = std::move(dirs);
  return WorkerSupervisor::Create(options);
}

ConvProblem Small() {
  return MakeProblem(ConvOp::kForward, Layout::kNHWC, DataType::kHalf, false, 8,
                     64, 64, 28, 3, 1, 1, 1, 1);
}

TEST(CudnnWorkerGpuTest, WorkerReportsTheRuntimeDeviceKey) {
  TUNEDB_SKIP_WITHOUT_GPU();
  absl::StatusOr<std::unique_ptr<WorkerSupervisor>> f = CudnnWorkers();
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)->Name(), "cudnn");
  absl::StatusOr<std::vector<DeviceInfo>> devices = (*f)->Devices();
  ASSERT_TRUE(devices.ok());
  absl::StatusOr<int> count = CudaDeviceCount();
  ASSERT_TRUE(count.ok());
  ASSERT_EQ(static_cast<int>(devices->size()), *count);
  for (const DeviceInfo& d : *devices) {
    absl::StatusOr<DeviceInfo> here = QueryCudaDevice(d.ordinal);
    ASSERT_TRUE(here.ok()) << here.status();
    // Same library search path here and in the worker: same key.
    EXPECT_EQ(d.key, here->key)
        << d.key.ToText() << " vs " << here->key.ToText();
    EXPECT_EQ(d.uuid, here->uuid);
    std::printf("[ worker   ] device %d: %s %s driver %s\n", d.ordinal,
                d.key.ToText().c_str(), d.uuid.c_str(),
                d.driver_version.c_str());
  }
  SearchOptions options;
  options.timeout = absl::Seconds(60);
  absl::StatusOr<SearchResult> r = (*f)->Search(0, Small(), options);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->results.empty());
  EXPECT_EQ(r->results[0].status, AlgoStatus::kOk);
  EXPECT_TRUE(r->verified);
}

TEST(CudnnWorkerGpuTest, WorkerKilledMidSearchIsSurvived) {
  TUNEDB_SKIP_WITHOUT_GPU();
  absl::StatusOr<std::unique_ptr<WorkerSupervisor>> f = CudnnWorkers();
  ASSERT_TRUE(f.ok()) << f.status();
  WorkerSupervisor& finder = **f;
  const pid_t pid = finder.worker_pid(0);
  ASSERT_GT(pid, 0);
  // Large enough that filling its buffers (0.8 GB an activation) and Find
  // take well over the killer's delay, however fast the search has become.
  const ConvProblem big =
      MakeProblem(ConvOp::kBackwardFilter, Layout::kNCHW, DataType::kFloat,
                  false, 128, 512, 512, 56, 3, 1, 1, 1, 1);
  std::thread killer([pid] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    ::kill(pid, SIGKILL);
  });
  SearchOptions options;
  options.timeout = absl::Seconds(120);
  const auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<SearchResult> r = finder.Search(0, big, options);
  killer.join();
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  ASSERT_EQ(r.status().code(), absl::StatusCode::kUnavailable)
      << r.status() << " after " << s << " s";
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("signal 9"));
  EXPECT_EQ(finder.restarts(0), 1);
  EXPECT_NE(finder.worker_pid(0), pid);
  std::printf("[ killed   ] %s (%.2f s)\n",
              std::string(r.status().message()).c_str(), s);

  absl::StatusOr<SearchResult> next = finder.Search(0, Small(), options);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->results[0].status, AlgoStatus::kOk);
  EXPECT_TRUE(next->verified);
}

TEST(CudnnWorkerGpuTest, TimeoutKillsTheWorkerAndTheNextSearchWorks) {
  TUNEDB_SKIP_WITHOUT_GPU();
  absl::StatusOr<std::unique_ptr<WorkerSupervisor>> f = CudnnWorkers();
  ASSERT_TRUE(f.ok()) << f.status();
  const ConvProblem big =
      MakeProblem(ConvOp::kBackwardFilter, Layout::kNCHW, DataType::kFloat,
                  false, 64, 256, 256, 56, 3, 1, 1, 1, 1);
  SearchOptions options;
  options.timeout = absl::Milliseconds(300);
  const auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<SearchResult> r = (*f)->Search(0, big, options);
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  ASSERT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded)
      << r.status();
  std::printf("[ timeout  ] %s (%.2f s including the restart)\n",
              std::string(r.status().message()).c_str(), s);
  options.timeout = absl::Seconds(60);
  absl::StatusOr<SearchResult> next = (*f)->Search(0, Small(), options);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_TRUE(next->verified);
}

TEST(CudnnWorkerGpuTest, TwoCudnnVersionsGiveTwoDeviceKeys) {
  TUNEDB_SKIP_WITHOUT_GPU();
  const char* env = std::getenv("TUNEDB_TEST_CUDNN_DIRS");
  if (env == nullptr || std::string(env).empty()) {
    GTEST_SKIP() << "TUNEDB_TEST_CUDNN_DIRS (dirA:dirB) is not set";
  }
  std::vector<std::string> dirs = absl::StrSplit(env, ':', absl::SkipEmpty());
  ASSERT_EQ(dirs.size(), 2u) << "TUNEDB_TEST_CUDNN_DIRS=" << env;
  absl::StatusOr<std::unique_ptr<WorkerSupervisor>> f = CudnnWorkers(dirs);
  ASSERT_TRUE(f.ok()) << f.status();
  absl::StatusOr<std::vector<DeviceInfo>> devices = (*f)->Devices();
  ASSERT_TRUE(devices.ok());
  ASSERT_EQ(devices->size() % 2, 0u);
  const size_t per_dir = devices->size() / 2;
  const DeviceInfo& a = (*devices)[0];
  const DeviceInfo& b = (*devices)[per_dir];
  std::printf("[ versions ] %s: %s\n[ versions ] %s: %s\n", dirs[0].c_str(),
              a.key.ToText().c_str(), dirs[1].c_str(), b.key.ToText().c_str());
  EXPECT_EQ(a.uuid, b.uuid);
  EXPECT_NE(a.key.cudnn_version, b.key.cudnn_version);
  EXPECT_NE(a.key, b.key);
  SearchOptions options;
  options.timeout = absl::Seconds(60);
  for (size_t i : {size_t{0}, per_dir}) {
    absl::StatusOr<SearchResult> r =
        (*f)->Search(static_cast<int>(i), Small(), options);
    ASSERT_TRUE(r.ok()) << dirs[i / per_dir] << ": " << r.status();
    EXPECT_EQ(r->results[0].status, AlgoStatus::kOk);
    EXPECT_TRUE(r->verified);
    std::printf("[ versions ] cuDNN %s: fastest algo %d (%s) %.4f ms\n",
                CudnnVersionText((*devices)[i].key.cudnn_version).c_str(),
                r->results[0].algo,
                std::string(MathTypeName(r->results[0].math_type)).c_str(),
                r->results[0].launch.median_ms);
  }
}

}  // namespace
}  // namespace tunedb
