// A daemon's revalidation on start under a fleet database: daemons in one
// process, each a tuning core on the simulated finder (cuDNN 9.19.0) with
// its own SQLite store and FleetSync, against a real PostgreSQL server the
// suite starts. The old records are published by a third host ("host-c")
// that no daemon here is. What is planned from the fleet's records, that
// the old record reaches the revalidation, that two daemons search a key
// once, that a stop loses nothing, and that an unreachable fleet leaves the
// local plan.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "server/finder/simulated_finder.h"
#include "server/tuning/background_revalidator.h"
#include "server/tuning/fleet_sync.h"
#include "server/tuning/revalidation_plan.h"
#include "server/tuning/tuning_core.h"
#include "store/fleet/fleet_options.h"
#include "store/fleet/fleet_store.h"
#include "store/store.h"
#include "tests/testing/postgres_test.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

using testing_util::TestDevice;
using testing_util::TestProblem;

constexpr int kServed = 91900;  // the simulated finder's version
constexpr int kOld = 91400;

// `p` on TestDevice(gpu) under cuDNN `cudnn` (and CUDA `cuda`; 0: the
// device's), as a search on host-c would have measured it.
Record OldRecord(const ConvProblem& p, int cudnn, int cuda = 0,
                 const std::string& gpu = testing_util::kTestGpu) {
  Record r;
  r.key = ProblemKey{TestDevice(gpu), p};
  r.key.device.cudnn_version = cudnn;
  if (cuda != 0) r.key.device.cuda_runtime_version = cuda;
  r.results = SimulatedFinder::Model(p);
  r.host = "host-c";
  r.finder = "simulated";
  r.repeats = 3;
  r.measured_at_us = 1'700'000'000'000'000;
  r.timing_version = kCurrentTimingVersion;
  return r;
}

// One daemon: its store, finder, fleet connection, FleetSync and core; the
// revalidator is started by Revalidate. Stopped in a daemon's order.
struct Daemon {
  std::unique_ptr<Store> store;
  std::unique_ptr<SimulatedFinder> finder;
  std::unique_ptr<FleetStore> fleet;
  std::unique_ptr<FleetSync> sync;
  std::unique_ptr<TuningCore> core;
  std::unique_ptr<BackgroundRevalidator> revalidator;

  ~Daemon() {
    revalidator.reset();
    if (core) core->Shutdown(absl::Seconds(5));
    core.reset();
    sync.reset();  // publishes what is left in the outbox
  }

  BackgroundRevalidator& Revalidate(BackgroundRevalidator::Options o = {}) {
    revalidator = std::make_unique<BackgroundRevalidator>(
        o, store.get(), core.get(), sync.get());
    return *revalidator;
  }
  // The record stored here for `p` on the served device, or nullopt.
  std::optional<Record> Made(const ConvProblem& p) {
    auto got = store->Get(ProblemKey{TestDevice(), p});
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? *got : std::nullopt;
  }
  int64_t CountUnder(int cudnn) {
    RecordFilter f;
    f.fields["cudnn"] = CudnnVersionText(cudnn);
    int64_t n = 0;
    EXPECT_TRUE(store->Query(f, 0, 0, [&](const Record&) {
                        ++n;
                        return true;
                      }).ok());
    return n;
  }
};

class FleetRevalidationTest : public testing_util::PostgresTest {
 protected:
  void SetUp() override {
    PostgresTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    fleet_options_.url = url_;
    fleet_options_.connect_timeout_s = 2;
    auto host_c = FleetStore::Open(fleet_options_);
    ASSERT_TRUE(host_c.ok()) << host_c.status();
    host_c_ = *std::move(host_c);
  }

  // A daemon whose fleet lease holder is `holder`, over the SQLite file
  // `path` (":memory:": a private one), on the simulated finder `sim`.
  std::unique_ptr<Daemon> Start(const std::string& holder,
                                const std::string& path = ":memory:",
                                const std::string& sim = "") {
    auto d = std::make_unique<Daemon>();
    Store::Options so;
    so.path = path;
    auto store = Store::Open(so);
    EXPECT_TRUE(store.ok()) << store.status();
    if (!store.ok()) return nullptr;
    d->store = *std::move(store);
    d->finder = std::make_unique<SimulatedFinder>(
        SimulatedFinder::Options::Parse(sim).value());
    auto fleet = FleetStore::Open(fleet_options_);
    EXPECT_TRUE(fleet.ok()) << fleet.status();
    if (!fleet.ok()) return nullptr;
    d->fleet = *std::move(fleet);
    FleetSync::Options sync;
    sync.holder = holder;
    d->sync = std::make_unique<FleetSync>(sync, d->fleet.get(), d->store.get());
    TuningCore::Options co;
    co.host = holder;
    co.flush_interval = absl::Milliseconds(20);
    auto core = TuningCore::Create(co, d->store.get(), d->finder.get(),
                                   d->sync.get());
    EXPECT_TRUE(core.ok()) << core.status();
    if (!core.ok()) return nullptr;
    d->core = *std::move(core);
    return d;
  }

  // host-c publishes `records` to the fleet.
  void Publish(const std::vector<Record>& records) {
    ASSERT_TRUE(host_c_->Publish(records, "host-c").ok());
  }
  // Old records of TestProblem(1..n) under kOld, published.
  std::vector<Record> PublishOld(int n) {
    std::vector<Record> old;
    for (int i = 1; i <= n; ++i) old.push_back(OldRecord(TestProblem(i), kOld));
    Publish(old);
    return old;
  }
  // Every host's measurement of `key` in the fleet.
  std::vector<Record> InFleet(const ProblemKey& key) {
    auto rows = host_c_->Measurements(key);
    EXPECT_TRUE(rows.ok()) << rows.status();
    return rows.ok() ? *rows : std::vector<Record>();
  }

  FleetOptions fleet_options_;
  std::unique_ptr<FleetStore> host_c_;  // the host that published old records
};

TEST_F(FleetRevalidationTest,
       ADaemonRevalidatesTheFleetsOldRecordsItDoesNotHoldItself) {
  const std::vector<Record> fleet_old = PublishOld(2);  // problems 1 and 2
  // Held under the served version in the fleet: not planned.
  Publish({OldRecord(TestProblem(3), kOld), OldRecord(TestProblem(3), kServed),
           OldRecord(TestProblem(6), kServed)});
  // Another GPU model's: not planned.
  Publish({OldRecord(TestProblem(4), kOld, 0, "NVIDIA A100")});
  std::unique_ptr<Daemon> a = Start("host-a");
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->store->Put(OldRecord(TestProblem(5), kOld)).ok());
  ASSERT_TRUE(a->store->Put(OldRecord(TestProblem(6), kOld)).ok());

  BackgroundRevalidator& revalidator = a->Revalidate();
  ASSERT_TRUE(revalidator.WaitFinished(absl::Seconds(30)));
  const BackgroundRevalidator::Progress p = revalidator.progress();
  EXPECT_TRUE(p.fleet_planned);
  EXPECT_EQ(p.planned, 3);     // 5 from here, 1 and 2 from the fleet
  EXPECT_EQ(p.from_fleet, 2);
  EXPECT_EQ(p.done, 3);
  EXPECT_EQ(p.failed, 0);
  EXPECT_EQ(a->finder->searches(), 3);
  const CoreStats stats = a->core->Stats();
  EXPECT_EQ(stats.revalidated, 3);  // re-timed, not searched in full
  EXPECT_EQ(stats.revalidation_full_searches, 0);
  for (int n : {1, 2, 5}) {
    std::optional<Record> made = a->Made(TestProblem(n));
    ASSERT_TRUE(made.has_value()) << n;
    EXPECT_EQ(made->revalidated_from_cudnn, kOld) << n;
  }
  for (int n : {3, 4, 6}) EXPECT_FALSE(a->Made(TestProblem(n))) << n;
  // The fleet's old records are here now, as the fleet has them; there
  // they are unchanged, host-c's only.
  for (const Record& old : fleet_old) {
    auto here = a->store->Get(old.key);
    ASSERT_TRUE(here.ok() && here->has_value()) << here.status();
    testing_util::ExpectSameRecord(**here, old);
    const std::vector<Record> rows = InFleet(old.key);
    ASSERT_EQ(rows.size(), 1u);
    testing_util::ExpectSameRecord(rows[0], old);
  }
  // The new records reach the fleet, saying where they came from.
  ASSERT_TRUE(a->sync->DrainOnce().ok());
  for (int n : {1, 2, 5}) {
    auto fleet_new = host_c_->Get(ProblemKey{TestDevice(), TestProblem(n)});
    ASSERT_TRUE(fleet_new.ok() && fleet_new->has_value()) << n;
    EXPECT_EQ((*fleet_new)->revalidated_from_cudnn, kOld);
    EXPECT_EQ((*fleet_new)->host, "host-a");
  }
}

TEST_F(FleetRevalidationTest,
       PlansFromTheNewestVersionHereOrInTheFleetTheServedCudaRuntimeFirst) {
  std::unique_ptr<Daemon> a = Start("host-a");
  ASSERT_NE(a, nullptr);
  // 1: newer in the fleet, under two CUDA runtimes.
  ASSERT_TRUE(a->store->Put(OldRecord(TestProblem(1), kOld)).ok());
  Publish({OldRecord(TestProblem(1), 91700, 12080),
           OldRecord(TestProblem(1), 91700)});
  // 2: newer here.
  ASSERT_TRUE(a->store->Put(OldRecord(TestProblem(2), 91700)).ok());
  Publish({OldRecord(TestProblem(2), kOld)});
  // 3: only in the fleet, only under another CUDA runtime.
  Publish({OldRecord(TestProblem(3), kOld, 12080)});

  auto plan = PlanRevalidations(*a->store,
                                {{TestDevice(), ""}, {TestDevice(), ""}}, 0,
                                a->sync.get());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->fleet_read);
  ASSERT_EQ(plan->jobs.size(), 3u);  // a device listed twice plans once
  const RevalidationJob& one = plan->jobs[0];
  EXPECT_EQ(one.problem, TestProblem(1));
  EXPECT_EQ(one.from_cudnn, 91700);
  ASSERT_TRUE(one.fleet_source.has_value());
  EXPECT_EQ(*one.fleet_source, OldRecord(TestProblem(1), 91700).key);
  const RevalidationJob& two = plan->jobs[1];
  EXPECT_EQ(two.problem, TestProblem(2));
  EXPECT_EQ(two.from_cudnn, 91700);
  EXPECT_FALSE(two.fleet_source.has_value());
  const RevalidationJob& three = plan->jobs[2];
  EXPECT_EQ(three.problem, TestProblem(3));
  EXPECT_EQ(three.from_cudnn, kOld);
  ASSERT_TRUE(three.fleet_source.has_value());
  EXPECT_EQ(three.fleet_source->device.cuda_runtime_version, 12080);
  for (const RevalidationJob& job : plan->jobs) {
    EXPECT_EQ(job.device, TestDevice());
  }
  auto limited =
      PlanRevalidations(*a->store, {{TestDevice(), ""}}, 2, a->sync.get());
  ASSERT_TRUE(limited.ok()) << limited.status();
  EXPECT_EQ(limited->jobs.size(), 2u);
}

TEST_F(FleetRevalidationTest,
       AnOldRecordTheFleetHoldsOnlyUnderAnotherCudaRuntimeIsRevalidatedFrom) {
  Publish({OldRecord(TestProblem(1), kOld, 12080)});
  std::unique_ptr<Daemon> a = Start("host-a");
  ASSERT_NE(a, nullptr);
  BackgroundRevalidator& revalidator = a->Revalidate();
  ASSERT_TRUE(revalidator.WaitFinished(absl::Seconds(30)));
  EXPECT_EQ(revalidator.progress().done, 1);
  EXPECT_EQ(a->core->Stats().revalidated, 1);
  EXPECT_EQ(a->core->Stats().revalidation_full_searches, 0);
  std::optional<Record> made = a->Made(TestProblem(1));
  ASSERT_TRUE(made.has_value());
  EXPECT_EQ(made->revalidated_from_cudnn, kOld);
}

TEST_F(FleetRevalidationTest, TwoDaemonsOfOneFleetSearchEachKeyOnce) {
  constexpr int kKeys = 8;
  PublishOld(kKeys);
  std::unique_ptr<Daemon> a = Start("host-a", ":memory:", "slow_ms=40");
  std::unique_ptr<Daemon> b = Start("host-b", ":memory:", "slow_ms=40");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  BackgroundRevalidator& ra = a->Revalidate();
  BackgroundRevalidator& rb = b->Revalidate();
  ASSERT_TRUE(ra.WaitFinished(absl::Seconds(60)));
  ASSERT_TRUE(rb.WaitFinished(absl::Seconds(60)));
  for (BackgroundRevalidator* r : {&ra, &rb}) {
    EXPECT_EQ(r->progress().planned, kKeys);
    EXPECT_EQ(r->progress().done, kKeys);
    EXPECT_EQ(r->progress().failed, 0);
  }
  EXPECT_EQ(a->finder->searches() + b->finder->searches(), kKeys);
  // Each holds every new record: its own searches' and the other's.
  EXPECT_EQ(a->CountUnder(kServed), kKeys);
  EXPECT_EQ(b->CountUnder(kServed), kKeys);
  for (int n = 1; n <= kKeys; ++n) {
    std::optional<Record> made = b->Made(TestProblem(n));
    ASSERT_TRUE(made.has_value()) << n;
    EXPECT_EQ(made->revalidated_from_cudnn, kOld) << n;
  }
  // A third daemon starting later finds everything in the fleet: nothing
  // planned, nothing searched.
  ASSERT_TRUE(a->sync->DrainOnce().ok());
  ASSERT_TRUE(b->sync->DrainOnce().ok());
  std::unique_ptr<Daemon> c = Start("host-d");
  ASSERT_NE(c, nullptr);
  BackgroundRevalidator& rc = c->Revalidate();
  ASSERT_TRUE(rc.WaitFinished(absl::Seconds(30)));
  EXPECT_EQ(rc.progress().planned, 0);
  EXPECT_EQ(c->finder->searches(), 0);
}

TEST_F(FleetRevalidationTest,
       ADaemonStoppedHalfWayLosesNothingAndTheNextStartPlansOnlyWhatIsMissing) {
  constexpr int kKeys = 4;
  const std::vector<Record> fleet_old = PublishOld(kKeys);
  testing_util::TempDir dir;
  const std::string path = dir.File("tunedb.db");
  int64_t searched = 0;
  int64_t stored = 0;
  {
    std::unique_ptr<Daemon> first = Start("host-a/1", path, "slow_ms=300");
    ASSERT_NE(first, nullptr);
    BackgroundRevalidator::Options one;
    one.parallel = 1;
    BackgroundRevalidator& revalidator = first->Revalidate(one);
    absl::SleepFor(absl::Milliseconds(150));  // the first search runs
    revalidator.Stop();
    EXPECT_EQ(revalidator.progress().failed, 0);  // a stop is no failure
    first->core->Shutdown(absl::Seconds(5));  // the running search finishes
    searched = first->finder->searches();
    stored = first->CountUnder(kServed);
    EXPECT_LT(stored, kKeys);
    EXPECT_EQ(stored, searched);
  }
  std::unique_ptr<Daemon> next = Start("host-a/2", path);
  ASSERT_NE(next, nullptr);
  BackgroundRevalidator& revalidator = next->Revalidate();
  ASSERT_TRUE(revalidator.WaitFinished(absl::Seconds(30)));
  EXPECT_EQ(revalidator.progress().planned, kKeys - stored);
  EXPECT_EQ(revalidator.progress().failed, 0);
  EXPECT_EQ(next->CountUnder(kServed), kKeys);
  EXPECT_EQ(searched + next->finder->searches(), kKeys);  // each key once
  // The old records are as they were, here and in the fleet.
  for (const Record& old : fleet_old) {
    const std::vector<Record> rows = InFleet(old.key);
    ASSERT_EQ(rows.size(), 1u);
    testing_util::ExpectSameRecord(rows[0], old);
    auto here = next->store->Get(old.key);
    ASSERT_TRUE(here.ok() && here->has_value()) << here.status();
    testing_util::ExpectSameRecord(**here, old);
  }
}

// After a driver upgrade (TuneMode::revalidate_older_driver): host-a's GPU
// reports kNewDriver.
constexpr char kNewDriver[] = "580.65.06";
constexpr char kOldDriver[] = "575.57.08";

// `p` under the served key, measured by host-c under `driver`.
Record ServedRecord(const ConvProblem& p, const std::string& driver) {
  Record r = OldRecord(p, kServed);
  r.driver_version = driver;
  return r;
}

absl::StatusOr<TuneAnswer> RevalidateDriver(TuningCore& core,
                                            const ConvProblem& p) {
  TuneMode mode;
  mode.revalidate_older_driver = true;
  return core.Tune(p, std::nullopt, {}, mode, absl::Now() + absl::Seconds(30));
}

TEST_F(FleetRevalidationTest,
       ADriverRevalidationReTimesTheRecordHereWithoutTakingTheFleetsCopy) {
  const Record old = ServedRecord(TestProblem(1), kOldDriver);
  Publish({old});
  std::unique_ptr<Daemon> a =
      Start("host-a", ":memory:", absl::StrCat("driver=", kNewDriver));
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->store->Put(old).ok());
  auto answer = RevalidateDriver(*a->core, TestProblem(1));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_TRUE(answer->searched);
  EXPECT_EQ(answer->record->host, "host-a");
  EXPECT_EQ(answer->record->driver_version, kNewDriver);
  EXPECT_EQ(answer->record->revalidated_from_driver, kOldDriver);
  EXPECT_EQ(a->core->Stats().revalidated, 1);
  // Published like any search: the fleet's record of the key is host-a's.
  ASSERT_TRUE(a->sync->DrainOnce().ok());
  auto in_fleet = host_c_->Get(old.key);
  ASSERT_TRUE(in_fleet.ok() && in_fleet->has_value()) << in_fleet.status();
  EXPECT_EQ((*in_fleet)->host, "host-a");
  EXPECT_EQ((*in_fleet)->revalidated_from_driver, kOldDriver);
}

TEST_F(FleetRevalidationTest,
       ADriverRevalidationOfAKeyNotStoredHereTakesTheFleetsCurrentRecord) {
  Publish({ServedRecord(TestProblem(1), kNewDriver)});
  std::unique_ptr<Daemon> a =
      Start("host-a", ":memory:", absl::StrCat("driver=", kNewDriver));
  ASSERT_NE(a, nullptr);
  auto answer = RevalidateDriver(*a->core, TestProblem(1));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_FALSE(answer->searched);
  EXPECT_EQ(answer->record->host, "host-c");
  EXPECT_EQ(a->finder->searches(), 0);
  EXPECT_TRUE(a->Made(TestProblem(1)).has_value());  // kept here
}

TEST_F(FleetRevalidationTest,
       ADriverRevalidationOfAKeyNotStoredHereReTimesTheFleetsOlderRecord) {
  const Record old = ServedRecord(TestProblem(1), kOldDriver);
  Publish({old});
  std::unique_ptr<Daemon> a =
      Start("host-a", ":memory:", absl::StrCat("driver=", kNewDriver));
  ASSERT_NE(a, nullptr);
  auto answer = RevalidateDriver(*a->core, TestProblem(1));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_TRUE(answer->searched);
  EXPECT_EQ(answer->record->driver_version, kNewDriver);
  EXPECT_EQ(answer->record->revalidated_from_driver, kOldDriver);
  EXPECT_EQ(a->finder->searches(), 1);
  EXPECT_EQ(a->core->Stats().revalidated, 1);
}

TEST_F(FleetRevalidationTest, AnUnreachableFleetLeavesTheLocalPlan) {
  PublishOld(3);  // 1..3, in the fleet only
  std::unique_ptr<Daemon> a = Start("host-a");
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->store->Put(OldRecord(TestProblem(11), kOld)).ok());
  ASSERT_TRUE(a->store->Put(OldRecord(TestProblem(12), kOld)).ok());
  ASSERT_TRUE(server()->Stop("fast"));
  BackgroundRevalidator& revalidator = a->Revalidate();
  ASSERT_TRUE(revalidator.WaitFinished(absl::Seconds(30)));
  const BackgroundRevalidator::Progress p = revalidator.progress();
  EXPECT_FALSE(p.fleet_planned);
  EXPECT_EQ(p.planned, 2);
  EXPECT_EQ(p.from_fleet, 0);
  EXPECT_EQ(p.done, 2);
  EXPECT_EQ(p.failed, 0);
  EXPECT_EQ(a->finder->searches(), 2);
  EXPECT_TRUE(a->Made(TestProblem(11)).has_value());
  EXPECT_TRUE(a->Made(TestProblem(12)).has_value());
  EXPECT_FALSE(a->Made(TestProblem(1)).has_value());
  const FleetHealth health = a->sync->Health();
  EXPECT_FALSE(health.connected);
  EXPECT_GE(health.errors, 1);
}

}  // namespace
}  // namespace tunedb
