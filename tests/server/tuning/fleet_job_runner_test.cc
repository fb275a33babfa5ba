// FleetJobRunner in one process: a tuning core on the simulated finder and a
// local SQLite store, its FleetSync and the job table on a real PostgreSQL
// server the suite starts. Which jobs it claims, when a job searches, how
// failures are retried, that running jobs keep their leases, and that Stop
// does not wait for the next claim.
#include "server/tuning/fleet_job_runner.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "server/finder/simulated_finder.h"
#include "server/tuning/fleet_sync.h"
#include "server/tuning/tuning_core.h"
#include "store/fleet/fleet_jobs.h"
#include "store/fleet/fleet_options.h"
#include "store/fleet/fleet_store.h"
#include "store/store.h"
#include "tests/testing/postgres_test.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

using testing_util::TestDevice;
using testing_util::TestKey;
using testing_util::TestProblem;
using testing_util::TestRecord;

class FleetJobRunnerTest : public testing_util::PostgresTest {
 protected:
  void SetUp() override {
    PostgresTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    fleet_options_.url = url_;
    auto fleet = FleetStore::Open(fleet_options_);
    ASSERT_TRUE(fleet.ok()) << fleet.status();
    fleet_ = *std::move(fleet);
    auto jobs = FleetJobs::Open(fleet_options_);
    ASSERT_TRUE(jobs.ok()) << jobs.status();
    jobs_ = *std::move(jobs);
    Store::Options so;
    so.path = ":memory:";
    auto store = Store::Open(so);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  void TearDown() override {
    runner_.reset();
    if (core_) core_->Shutdown(absl::Seconds(5));
    core_.reset();
    sync_.reset();
  }

  // The core on the simulated finder `sim` with its FleetSync (`sync`
  // options, holder "host-a"); the runner is started by Run.
  void Start(const std::string& sim, FleetSync::Options sync = {}) {
    auto o = SimulatedFinder::Options::Parse(sim);
    ASSERT_TRUE(o.ok()) << o.status();
    finder_ = std::make_unique<SimulatedFinder>(*o);
    sync.holder = "host-a";
    sync_ = std::make_unique<FleetSync>(sync, fleet_.get(), store_.get());
    TuningCore::Options co;
    co.flush_interval = absl::Milliseconds(20);
    auto core = TuningCore::Create(co, store_.get(), finder_.get(), sync_.get());
    ASSERT_TRUE(core.ok()) << core.status();
    core_ = *std::move(core);
  }

  void Run(FleetJobRunner::Options options = {}) {
    options.idle_poll = std::min(options.idle_poll, absl::Milliseconds(20));
    runner_ = std::make_unique<FleetJobRunner>(options, jobs_.get(),
                                               sync_.get(), core_.get());
  }

  // The batch's progress once `done` says so, or after `timeout`.
  template <typename Done>
  FleetBatchProgress WaitFor(const std::string& batch, Done done,
                             absl::Duration timeout = absl::Seconds(20)) {
    FleetBatchProgress progress;
    const absl::Time until = absl::Now() + timeout;
    while (true) {
      auto p = jobs_->Progress(batch);
      EXPECT_TRUE(p.ok()) << p.status();
      if (p.ok()) progress = *p;
      if (!p.ok() || done(progress) || absl::Now() >= until) return progress;
      absl::SleepFor(absl::Milliseconds(20));
    }
  }
  static bool Finished(const FleetBatchProgress& p) {
    return p.total() > 0 && p.queued == 0 && p.running == 0;
  }

  FleetOptions fleet_options_;
  std::unique_ptr<FleetStore> fleet_;
  std::unique_ptr<FleetJobs> jobs_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<SimulatedFinder> finder_;
  std::unique_ptr<FleetSync> sync_;
  std::unique_ptr<TuningCore> core_;
  std::unique_ptr<FleetJobRunner> runner_;
};

TEST_F(FleetJobRunnerTest, RunsEveryQueuedJobOfItsDeviceOnceAndMarksItDone) {
  ASSERT_NO_FATAL_FAILURE(Start(""));
  std::vector<ProblemKey> keys;
  for (int n = 1; n <= 6; ++n) keys.push_back(TestKey(n));
  ASSERT_EQ(jobs_->Enqueue("six", keys)->added, 6);
  Run();
  FleetBatchProgress progress = WaitFor("six", Finished);
  runner_->Stop();  // its threads have counted what they finished
  EXPECT_EQ(progress.done, 6);
  EXPECT_EQ(progress.failed, 0);
  EXPECT_EQ(progress.searched, 6);
  EXPECT_EQ(finder_->searches(), 6);
  EXPECT_EQ(sync_->Health().jobs_done, 6);
  EXPECT_EQ(core_->Stats().records, 6);
}

TEST_F(FleetJobRunnerTest, AJobWhoseKeyIsStoredHereIsDoneWithoutASearch) {
  ASSERT_NO_FATAL_FAILURE(Start(""));
  auto tuned = core_->Tune(TestProblem(7), std::nullopt, Constraints{}, TuneMode{},
                           absl::Now() + absl::Seconds(30));
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  ASSERT_EQ(finder_->searches(), 1);
  ASSERT_TRUE(jobs_->Enqueue("stored", {TestKey(7)}).ok());
  Run();
  FleetBatchProgress progress = WaitFor("stored", Finished);
  EXPECT_EQ(progress.done, 1);
  EXPECT_EQ(progress.searched, 0);
  EXPECT_EQ(finder_->searches(), 1);
}

TEST_F(FleetJobRunnerTest, AJobWhoseKeyTheFleetHasIsDoneWithoutASearch) {
  ASSERT_NO_FATAL_FAILURE(Start(""));
  Record record = TestRecord(1);
  record.key = TestKey(8);
  record.host = "host-b";
  ASSERT_TRUE(fleet_->Publish({record}, "host-b").ok());
  ASSERT_TRUE(jobs_->Enqueue("fleet", {TestKey(8)}).ok());
  Run();
  FleetBatchProgress progress = WaitFor("fleet", Finished);
  EXPECT_EQ(progress.done, 1);
  EXPECT_EQ(progress.searched, 0);
  EXPECT_EQ(finder_->searches(), 0);
  EXPECT_EQ(core_->Stats().records, 1);  // kept here as well
}

TEST_F(FleetJobRunnerTest, ARevalidationJobRetimesTheOldRecordTheFleetHolds) {
  ASSERT_NO_FATAL_FAILURE(Start(""));
  // Only host-b ever held the problem's record under cuDNN 9.14.
  constexpr int kOld = 91400;
  const ProblemKey key = TestKey(20);
  auto searched = finder_->Search(0, key.problem, SearchOptions());
  ASSERT_TRUE(searched.ok()) << searched.status();
  Record old;
  old.key = key;
  old.key.device.cudnn_version = kOld;
  old.results = searched->results;
  old.host = "host-b";
  old.finder = "simulated";
  old.measured_at_us = 1'700'000'000'000'000;
  old.timing_version = kCurrentTimingVersion;
  ASSERT_TRUE(fleet_->Publish({old}, "host-b").ok());
  ASSERT_TRUE(jobs_->Enqueue("upgrade", {key}, kOld).ok());
  Run();
  FleetBatchProgress progress = WaitFor("upgrade", Finished);
  runner_->Stop();
  EXPECT_EQ(progress.done, 1);
  EXPECT_EQ(progress.searched, 1);
  const CoreStats stats = core_->Stats();
  EXPECT_EQ(stats.revalidated, 1);
  EXPECT_EQ(stats.revalidation_full_searches, 0);
  auto stored = store_->Get(key);
  ASSERT_TRUE(stored.ok() && stored->has_value()) << stored.status();
  EXPECT_EQ((*stored)->revalidated_from_cudnn, kOld);
}

TEST_F(FleetJobRunnerTest, ARevalidationJobWithNoOldRecordAnywhereSearchesInFull) {
  ASSERT_NO_FATAL_FAILURE(Start(""));
  ASSERT_TRUE(jobs_->Enqueue("nothing-old", {TestKey(21)}, 91400).ok());
  Run();
  FleetBatchProgress progress = WaitFor("nothing-old", Finished);
  runner_->Stop();
  EXPECT_EQ(progress.done, 1);
  EXPECT_EQ(core_->Stats().revalidation_full_searches, 1);
  auto stored = store_->Get(TestKey(21));
  ASSERT_TRUE(stored.ok() && stored->has_value()) << stored.status();
  EXPECT_EQ((*stored)->revalidated_from_cudnn, 0);
}

TEST_F(FleetJobRunnerTest, AJobForAGpuItDoesNotServeStaysQueuedForADaemonThatDoes) {
  ASSERT_NO_FATAL_FAILURE(Start(""));
  ASSERT_TRUE(
      jobs_->Enqueue("other", {TestKey(9, 64, 64, TestDevice("Other GPU"))})
          .ok());
  ASSERT_TRUE(jobs_->Enqueue("ours", {TestKey(10)}).ok());
  Run();
  ASSERT_EQ(WaitFor("ours", Finished).done, 1);
  // Many claims later, the other GPU's job is still untouched.
  absl::SleepFor(absl::Milliseconds(300));
  FleetBatchProgress other = *jobs_->Progress("other");
  EXPECT_EQ(other.queued, 1);
  EXPECT_EQ(other.running + other.done + other.failed, 0);
  EXPECT_EQ(finder_->searches(), 1);
}

TEST_F(FleetJobRunnerTest, AFailingJobIsRetriedUntilMaxAttemptsThenMarkedFailed) {
  ASSERT_NO_FATAL_FAILURE(Start("fail_n=13"));
  ASSERT_TRUE(jobs_->Enqueue("fails", {TestKey(13), TestKey(14)}).ok());
  FleetJobRunner::Options options;
  options.max_attempts = 2;
  Run(options);
  FleetBatchProgress progress = WaitFor("fails", Finished);
  EXPECT_EQ(progress.failed, 1);
  EXPECT_EQ(progress.done, 1);
  EXPECT_EQ(progress.errors.size(), 1u);
  // The failing key searched once per attempt, the other once.
  EXPECT_EQ(finder_->searches(), 3);
  EXPECT_EQ(SqlInt("SELECT attempts FROM fleet_jobs WHERE batch = 'fails' "
                   "AND state = 'failed'"),
            2);
}

TEST_F(FleetJobRunnerTest, ARunningJobKeepsItsLeasePastItsLengthSoNoOtherDaemonTakesIt) {
  FleetSync::Options sync;
  sync.lease = absl::Milliseconds(600);
  ASSERT_NO_FATAL_FAILURE(Start("slow_ms=2500", sync));
  ASSERT_TRUE(jobs_->Enqueue("long", {TestKey(15)}).ok());
  Run();
  ASSERT_EQ(WaitFor("long", [](const FleetBatchProgress& p) {
              return p.running == 1;
            }).running,
            1);
  // Two lease lengths into the search: unrenewed, the lease would be over.
  absl::SleepFor(absl::Milliseconds(1200));
  auto taken = jobs_->Claim({TestDevice().ToText()}, "host-b", sync.lease);
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_FALSE(taken->has_value()) << "another daemon took the running job";
  FleetBatchProgress progress = WaitFor("long", Finished);
  EXPECT_EQ(progress.done, 1);
  EXPECT_EQ(finder_->searches(), 1);
}

TEST_F(FleetJobRunnerTest, StopReturnsAtOnceWhileWaitingForTheNextClaim) {
  ASSERT_NO_FATAL_FAILURE(Start(""));
  FleetJobRunner::Options options;
  options.idle_poll = absl::Minutes(10);
  runner_ = std::make_unique<FleetJobRunner>(options, jobs_.get(), sync_.get(),
                                             core_.get());
  absl::SleepFor(absl::Milliseconds(200));  // the first claims found nothing
  const absl::Time start = absl::Now();
  runner_->Stop();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  // Stopped, it claims nothing more.
  ASSERT_TRUE(jobs_->Enqueue("late", {TestKey(16)}).ok());
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_EQ(jobs_->Progress("late")->queued, 1);
  EXPECT_EQ(finder_->searches(), 0);
}

}  // namespace
}  // namespace tunedb
