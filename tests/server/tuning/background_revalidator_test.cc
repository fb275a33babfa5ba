// BackgroundRevalidator over an in-memory store, the tuning core and the
// simulated finder (cuDNN 9.19.0): records stored under other versions are
// made again for the served one.
#include "server/tuning/background_revalidator.h"

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/finder/simulated_finder.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

using testing_util::TestDevice;
using testing_util::TestProblem;

constexpr int kServed = 91900;  // the simulated finder's version

class BackgroundRevalidatorTest : public testing::Test {
 protected:
  void Start(const std::string& sim = "") {
    Store::Options so;
    so.path = ":memory:";
    store_ = std::move(Store::Open(so).value());
    finder_ = std::make_unique<SimulatedFinder>(
        SimulatedFinder::Options::Parse(sim).value());
    core_ = std::move(
        TuningCore::Create(TuningCore::Options(), store_.get(), finder_.get())
            .value());
  }
  void TearDown() override {
    if (core_) core_->Shutdown(absl::Seconds(5));
  }

  // `p` as searched on TestDevice(gpu) under cuDNN `cudnn` (and driver
  // `driver`), stored.
  Record StoreUnder(const ConvProblem& p, int cudnn,
                    const std::string& gpu = testing_util::kTestGpu,
                    const std::string& driver = "") {
    Record r;
    r.key = ProblemKey{TestDevice(gpu), p};
    r.key.device.cudnn_version = cudnn;
    r.driver_version = driver;
    r.results = SimulatedFinder::Model(p);
    r.finder = "simulated";
    r.repeats = 3;
    r.measured_at_us = 1;
    EXPECT_TRUE(store_->Put(r).ok());
    return r;
  }
  // `p` stored under the served key, measured under `driver`.
  Record StoreUnderDriver(const ConvProblem& p, const std::string& driver) {
    return StoreUnder(p, kServed, testing_util::kTestGpu, driver);
  }
  // The served key's record of `p`.
  Record Served(const ConvProblem& p) {
    auto got = store_->Get(ProblemKey{TestDevice(), p});
    EXPECT_TRUE(got.ok() && got->has_value());
    return got.ok() && got->has_value() ? **got : Record();
  }
  int64_t CountUnder(int cudnn) {
    RecordFilter f;
    f.fields["cudnn"] = CudnnVersionText(cudnn);
    int64_t n = 0;
    EXPECT_TRUE(store_->Query(f, 0, 0, [&](const Record&) {
                        ++n;
                        return true;
                      }).ok());
    return n;
  }
  std::unique_ptr<BackgroundRevalidator> Revalidate(
      BackgroundRevalidator::Options options = {}) {
    return std::make_unique<BackgroundRevalidator>(options, store_.get(),
                                                   core_.get());
  }

  std::unique_ptr<Store> store_;
  std::unique_ptr<SimulatedFinder> finder_;
  std::unique_ptr<TuningCore> core_;
};

TEST_F(BackgroundRevalidatorTest,
       MakesTheServedVersionsMissingRecordsFromAnOlderOnesAndSaysWhereFrom) {
  Start();
  for (int64_t n : {1, 2, 3}) StoreUnder(TestProblem(n), 91400);
  StoreUnder(TestProblem(3), kServed);  // already there: left alone
  auto revalidator = Revalidate();
  ASSERT_TRUE(revalidator->WaitFinished(absl::Seconds(30)));
  const BackgroundRevalidator::Progress p = revalidator->progress();
  EXPECT_EQ(p.planned, 2);
  EXPECT_EQ(p.done, 2);
  EXPECT_EQ(p.failed, 0);
  for (int64_t n : {1, 2}) {
    auto made = store_->Get(ProblemKey{TestDevice(), TestProblem(n)});
    ASSERT_TRUE(made.ok() && made->has_value()) << n;
    EXPECT_EQ((*made)->revalidated_from_cudnn, 91400);
  }
  auto kept = store_->Get(ProblemKey{TestDevice(), TestProblem(3)});
  ASSERT_TRUE(kept.ok() && kept->has_value());
  EXPECT_EQ((*kept)->revalidated_from_cudnn, 0);
  EXPECT_EQ(CountUnder(91400), 3);  // the old records are only read
  EXPECT_EQ(core_->Stats().revalidated, 2);
}

TEST_F(BackgroundRevalidatorTest,
       PlansFromTheNewestOtherVersionAndOnlyForTheServedGpuModel) {
  Start();
  StoreUnder(TestProblem(1), 91400);
  StoreUnder(TestProblem(1), 91700);
  StoreUnder(TestProblem(2), 91400);
  StoreUnder(TestProblem(4), 91400, "NVIDIA A100");
  auto plan =
      PlanRevalidations(*store_, {{TestDevice(), ""}, {TestDevice(), ""}}, 0);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->fleet_read);  // no fleet database
  const std::vector<RevalidationJob>& jobs = plan->jobs;
  ASSERT_EQ(jobs.size(), 2u);  // a device listed twice plans once
  EXPECT_EQ(jobs[0].problem, TestProblem(1));
  EXPECT_EQ(jobs[0].from_cudnn, 91700);
  EXPECT_FALSE(jobs[0].fleet_source.has_value());
  EXPECT_EQ(jobs[1].problem, TestProblem(2));
  EXPECT_EQ(jobs[1].from_cudnn, 91400);
  EXPECT_EQ(jobs[1].device, TestDevice());
  EXPECT_EQ(PlanRevalidations(*store_, {{TestDevice(), ""}}, 1)->jobs.size(),
            1u);
}

TEST_F(BackgroundRevalidatorTest, ARestartPlansOnlyTheKeysStillMissing) {
  Start();
  for (int64_t n : {1, 2, 3}) StoreUnder(TestProblem(n), 91400);
  BackgroundRevalidator::Options first;
  first.max_keys = 1;  // as if stopped after one key
  auto once = Revalidate(first);
  ASSERT_TRUE(once->WaitFinished(absl::Seconds(30)));
  EXPECT_EQ(once->progress().done, 1);
  once.reset();
  auto again = Revalidate();
  ASSERT_TRUE(again->WaitFinished(absl::Seconds(30)));
  EXPECT_EQ(again->progress().planned, 2);
  EXPECT_EQ(again->progress().done, 2);
  EXPECT_EQ(CountUnder(kServed), 3);
  EXPECT_EQ(finder_->searches(), 3);  // each key revalidated once
}

TEST_F(BackgroundRevalidatorTest, StopLeavesTheRestForTheNextStartAndLosesNothing) {
  Start("slow_ms=300");
  for (int64_t n = 1; n <= 6; ++n) StoreUnder(TestProblem(n), 91400);
  BackgroundRevalidator::Options one;
  one.parallel = 1;
  auto revalidator = Revalidate(one);
  absl::SleepFor(absl::Milliseconds(100));
  revalidator->Stop();
  EXPECT_TRUE(revalidator->WaitFinished(absl::ZeroDuration()));
  const int64_t done = revalidator->progress().done;
  EXPECT_LT(done, 6);
  EXPECT_EQ(revalidator->progress().failed, 0);  // a stop is no failure
  revalidator.reset();
  // The next start revalidates the rest (joining the search the stopped
  // one left running): every key once.
  auto next = Revalidate();
  ASSERT_TRUE(next->WaitFinished(absl::Seconds(30)));
  EXPECT_EQ(next->progress().failed, 0);
  EXPECT_EQ(CountUnder(kServed), 6);
  EXPECT_EQ(finder_->searches(), 6);
}

constexpr char kNewDriver[] = "580.65.06";
constexpr char kOldDriver[] = "575.57.08";

TEST_F(BackgroundRevalidatorTest,
       AfterADriverUpgradeItReTimesTheRecordsOfOlderDriversOnlyAndMarksThem) {
  Start(absl::StrCat("driver=", kNewDriver));
  for (int64_t n : {1, 2}) StoreUnderDriver(TestProblem(n), kOldDriver);
  StoreUnderDriver(TestProblem(3), kNewDriver);   // current
  StoreUnderDriver(TestProblem(4), "590.12");     // newer: left alone
  StoreUnderDriver(TestProblem(5), "simulated");  // no order: left alone
  auto revalidator = Revalidate();
  ASSERT_TRUE(revalidator->WaitFinished(absl::Seconds(30)));
  const BackgroundRevalidator::Progress p = revalidator->progress();
  EXPECT_EQ(p.planned, 2);
  EXPECT_EQ(p.done, 2);
  EXPECT_EQ(p.failed, 0);
  for (int64_t n : {1, 2}) {
    const Record made = Served(TestProblem(n));
    EXPECT_EQ(made.driver_version, kNewDriver) << n;
    EXPECT_EQ(made.revalidated_from_driver, kOldDriver) << n;
  }
  EXPECT_EQ(Served(TestProblem(4)).driver_version, "590.12");
  EXPECT_EQ(Served(TestProblem(5)).driver_version, "simulated");
  EXPECT_EQ(CountUnder(kServed), 5);  // each key still holds one record
  EXPECT_EQ(finder_->searches(), 2);
  EXPECT_EQ(core_->Stats().revalidated, 2);
}

TEST_F(BackgroundRevalidatorTest, PlansTheServedKeysRecordsOfAnOlderDriver) {
  Start();
  StoreUnderDriver(TestProblem(1), kOldDriver);
  StoreUnderDriver(TestProblem(2), kNewDriver);
  StoreUnder(TestProblem(3), 91400, testing_util::kTestGpu, kOldDriver);
  auto plan = PlanRevalidations(*store_, {{TestDevice(), kNewDriver}}, 0);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->jobs.size(), 2u);
  EXPECT_EQ(plan->jobs[0].problem, TestProblem(1));
  EXPECT_EQ(plan->jobs[0].from_driver, kOldDriver);
  EXPECT_EQ(plan->jobs[0].from_cudnn, 0);
  // The other version's problem is a cuDNN revalidation, as before.
  EXPECT_EQ(plan->jobs[1].problem, TestProblem(3));
  EXPECT_EQ(plan->jobs[1].from_cudnn, 91400);
  EXPECT_EQ(plan->jobs[1].from_driver, "");
  // A device whose driver cannot be read plans no driver revalidation.
  auto unread = PlanRevalidations(*store_, {{TestDevice(), "simulated"}}, 0);
  ASSERT_TRUE(unread.ok()) << unread.status();
  ASSERT_EQ(unread->jobs.size(), 1u);
  EXPECT_EQ(unread->jobs[0].from_cudnn, 91400);
}

TEST_F(BackgroundRevalidatorTest, ASecondStartAfterADriverUpgradePlansNothing) {
  Start(absl::StrCat("driver=", kNewDriver));
  for (int64_t n : {1, 2, 3}) StoreUnderDriver(TestProblem(n), kOldDriver);
  auto first = Revalidate();
  ASSERT_TRUE(first->WaitFinished(absl::Seconds(30)));
  EXPECT_EQ(first->progress().done, 3);
  first.reset();
  auto second = Revalidate();
  ASSERT_TRUE(second->WaitFinished(absl::Seconds(30)));
  EXPECT_EQ(second->progress().planned, 0);
  EXPECT_EQ(finder_->searches(), 3);
}

TEST_F(BackgroundRevalidatorTest,
       ADriverRevalidationStoppedHalfWayResumesAtTheNextStart) {
  Start(absl::StrCat("driver=", kNewDriver, ";slow_ms=300"));
  for (int64_t n = 1; n <= 6; ++n) StoreUnderDriver(TestProblem(n), kOldDriver);
  BackgroundRevalidator::Options one;
  one.parallel = 1;
  auto revalidator = Revalidate(one);
  absl::SleepFor(absl::Milliseconds(100));
  revalidator->Stop();
  EXPECT_TRUE(revalidator->WaitFinished(absl::ZeroDuration()));
  EXPECT_LT(revalidator->progress().done, 6);
  EXPECT_EQ(revalidator->progress().failed, 0);
  revalidator.reset();
  auto next = Revalidate();
  ASSERT_TRUE(next->WaitFinished(absl::Seconds(30)));
  EXPECT_EQ(next->progress().failed, 0);
  for (int64_t n = 1; n <= 6; ++n) {
    EXPECT_EQ(Served(TestProblem(n)).revalidated_from_driver, kOldDriver) << n;
  }
  // Every key re-timed once (the next start joins the search the stopped
  // one left running).
  EXPECT_EQ(finder_->searches(), 6);
}

TEST_F(BackgroundRevalidatorTest, WithNoOlderRecordsItFinishesAtOnce) {
  Start();
  StoreUnder(TestProblem(1), kServed);
  auto revalidator = Revalidate();
  ASSERT_TRUE(revalidator->WaitFinished(absl::Seconds(10)));
  EXPECT_EQ(revalidator->progress().planned, 0);
  EXPECT_EQ(finder_->searches(), 0);
}

}  // namespace
}  // namespace tunedb
