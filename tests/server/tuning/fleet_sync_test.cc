// FleetSync, a daemon's side of the fleet tier, through its public interface
// against a real PostgreSQL server the suite starts and a local SQLite store:
// read-through, leases (claim, wait, poll, renew, release), publishing the
// outbox, and how an unreachable database is reported and skipped.
#include "server/tuning/fleet_sync.h"

#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "store/fleet/fleet_options.h"
#include "store/fleet/fleet_store.h"
#include "store/store.h"
#include "tests/testing/postgres_server.h"
#include "tests/testing/postgres_test.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

using testing_util::PostgresServer;
using testing_util::TestRecord;

class FleetSyncTest : public testing_util::PostgresTest {
 protected:
  void SetUp() override {
    PostgresTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    FleetOptions fo;
    fo.url = url_;
    fo.connect_timeout_s = 2;
    auto fleet = FleetStore::Open(fo);
    ASSERT_TRUE(fleet.ok()) << fleet.status();
    fleet_ = *std::move(fleet);
    // Another host's view of the same database.
    auto other = FleetStore::Open(fo);
    ASSERT_TRUE(other.ok()) << other.status();
    other_ = *std::move(other);
    Store::Options so;
    so.path = ":memory:";
    auto store = Store::Open(so);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  FleetSync& Start(FleetSync::Options options = {}) {
    if (options.holder.empty()) options.holder = "host-a";
    sync_ = std::make_unique<FleetSync>(options, fleet_.get(), store_.get());
    return *sync_;
  }

  static ValidKey KeyOf(const Record& record) {
    absl::StatusOr<ValidKey> key = ValidKey::Make(record.key);
    EXPECT_TRUE(key.ok()) << key.status();
    return *std::move(key);
  }

  // Whether another host ("host-b") can take the lease on `key` now.
  bool OtherHostCanClaim(const ValidKey& key) {
    auto claim = other_->TryClaim(key.key(), "host-b", absl::Seconds(30));
    EXPECT_TRUE(claim.ok()) << claim.status();
    return claim.ok() && claim->claimed;
  }

  // The fleet's answer for `key` as another host reads it.
  std::optional<Record> InFleet(const ValidKey& key) {
    auto got = other_->Get(key.key());
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? *got : std::nullopt;
  }

  std::unique_ptr<FleetStore> fleet_;
  std::unique_ptr<FleetStore> other_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<FleetSync> sync_;  // declared last: destroyed first
};

TEST_F(FleetSyncTest, ResolveClaimsAKeyTheFleetHasNoRecordForAndNobodyHolds) {
  FleetSync& sync = Start();
  const ValidKey key = KeyOf(TestRecord(1));
  FleetSync::Resolution resolution = sync.Resolve(key);
  EXPECT_EQ(resolution.outcome, FleetSync::Outcome::kClaimed);
  EXPECT_FALSE(resolution.record.has_value());
  EXPECT_FALSE(OtherHostCanClaim(key));
  FleetHealth health = sync.Health();
  EXPECT_TRUE(health.enabled);
  EXPECT_TRUE(health.connected);
  EXPECT_EQ(health.claims, 1);
  EXPECT_EQ(health.waits, 0);
  EXPECT_EQ(health.fetched, 0);
  EXPECT_EQ(health.errors, 0);
  EXPECT_EQ(health.last_error, "");
}

TEST_F(FleetSyncTest, ResolveAnswersWithTheFleetsRecordWithoutTakingALease) {
  FleetSync& sync = Start();
  const Record record = TestRecord(2);
  ASSERT_TRUE(other_->Publish({record}, "host-b").ok());
  const ValidKey key = KeyOf(record);
  FleetSync::Resolution resolution = sync.Resolve(key);
  ASSERT_EQ(resolution.outcome, FleetSync::Outcome::kFound);
  ASSERT_TRUE(resolution.record.has_value());
  testing_util::ExpectSameRecord(*resolution.record, record);
  EXPECT_TRUE(OtherHostCanClaim(key));
  EXPECT_EQ(sync.Health().fetched, 1);
  EXPECT_EQ(sync.Health().claims, 0);
}

TEST_F(FleetSyncTest, AStaleFleetRecordIsNoAnswerSoTheKeyIsClaimedForASearch) {
  FleetSync& sync = Start();
  Record record = TestRecord(3);
  record.timing_version = kCurrentTimingVersion - 1;
  ASSERT_TRUE(record.stale());
  ASSERT_TRUE(other_->Publish({record}, "host-b").ok());
  FleetSync::Resolution resolution = sync.Resolve(KeyOf(record));
  EXPECT_EQ(resolution.outcome, FleetSync::Outcome::kClaimed);
  EXPECT_FALSE(resolution.record.has_value());
}

TEST_F(FleetSyncTest, FetchReadsThroughWithoutClaimingAndCountsOnlyRecordsFound) {
  FleetSync& sync = Start();
  const Record record = TestRecord(4);
  const ValidKey key = KeyOf(record);
  EXPECT_FALSE(sync.Fetch(key).has_value());
  EXPECT_TRUE(OtherHostCanClaim(key));
  ASSERT_TRUE(other_->Publish({record}, "host-b").ok());
  std::optional<Record> fetched = sync.Fetch(key);
  ASSERT_TRUE(fetched.has_value());
  testing_util::ExpectSameRecord(*fetched, record);
  FleetHealth health = sync.Health();
  EXPECT_EQ(health.fetched, 1);
  EXPECT_EQ(health.claims, 0);
}

TEST_F(FleetSyncTest, AKeyAnotherHostHoldsIsHeldUntilItsLeaseExpiresThenClaimed) {
  FleetSync& sync = Start();
  const ValidKey key = KeyOf(TestRecord(5));
  auto claim = other_->TryClaim(key.key(), "host-b", absl::Milliseconds(500));
  ASSERT_TRUE(claim.ok() && claim->claimed);
  EXPECT_EQ(sync.Resolve(key).outcome, FleetSync::Outcome::kHeld);
  EXPECT_EQ(sync.Poll(key).outcome, FleetSync::Outcome::kHeld);
  // Only the first ask of a search counts as a wait.
  EXPECT_EQ(sync.Health().waits, 1);
  absl::SleepFor(absl::Milliseconds(700));
  EXPECT_EQ(sync.Poll(key).outcome, FleetSync::Outcome::kClaimed);
  EXPECT_FALSE(OtherHostCanClaim(key));
  EXPECT_EQ(sync.Health().claims, 1);
}

TEST_F(FleetSyncTest, PollFindsTheRecordTheHostHoldingTheKeyPublished) {
  FleetSync& sync = Start();
  const Record record = TestRecord(6);
  const ValidKey key = KeyOf(record);
  auto claim = other_->TryClaim(key.key(), "host-b", absl::Seconds(30));
  ASSERT_TRUE(claim.ok() && claim->claimed);
  ASSERT_EQ(sync.Resolve(key).outcome, FleetSync::Outcome::kHeld);
  ASSERT_TRUE(other_->Publish({record}, "host-b").ok());
  FleetSync::Resolution resolution = sync.Poll(key);
  ASSERT_EQ(resolution.outcome, FleetSync::Outcome::kFound);
  ASSERT_TRUE(resolution.record.has_value());
  testing_util::ExpectSameRecord(*resolution.record, record);
}

TEST_F(FleetSyncTest, SearchFailedGivesUpTheLease) {
  FleetSync& sync = Start();
  const ValidKey key = KeyOf(TestRecord(7));
  ASSERT_EQ(sync.Resolve(key).outcome, FleetSync::Outcome::kClaimed);
  sync.SearchFailed(key);
  EXPECT_TRUE(OtherHostCanClaim(key));
  EXPECT_EQ(sync.Health().errors, 0);
}

TEST_F(FleetSyncTest, TheRenewerKeepsAClaimedKeysLeaseAliveWhileItsSearchRuns) {
  FleetSync::Options options;
  options.lease = absl::Milliseconds(600);
  FleetSync& sync = Start(options);
  const ValidKey key = KeyOf(TestRecord(8));
  ASSERT_EQ(sync.Resolve(key).outcome, FleetSync::Outcome::kClaimed);
  // Three lease lengths: unrenewed, the lease would have expired twice.
  absl::SleepFor(absl::Milliseconds(1800));
  EXPECT_FALSE(OtherHostCanClaim(key));
  EXPECT_EQ(sync.Health().errors, 0);
}

TEST_F(FleetSyncTest, DrainOncePublishesTheOutboxEmptiesItAndReleasesTheLease) {
  FleetSync::Options options;
  options.publish_batch = 2;  // three entries: more than one batch
  FleetSync& sync = Start(options);
  // Without its threads, only this DrainOnce publishes.
  sync.Stop();
  const Record records[] = {TestRecord(9), TestRecord(10), TestRecord(11)};
  ASSERT_EQ(sync.Resolve(KeyOf(records[0])).outcome,
            FleetSync::Outcome::kClaimed);
  for (const Record& r : records) ASSERT_TRUE(store_->PutForFleet(r).ok());
  ASSERT_TRUE(sync.DrainOnce().ok());
  EXPECT_EQ(*store_->OutboxSize(), 0);
  for (const Record& r : records) {
    std::optional<Record> published = InFleet(KeyOf(r));
    ASSERT_TRUE(published.has_value()) << r.key.ToText();
    testing_util::ExpectSameRecord(*published, r);
  }
  EXPECT_TRUE(OtherHostCanClaim(KeyOf(records[0])));
  FleetHealth health = sync.Health();
  EXPECT_EQ(health.published, 3);
  EXPECT_EQ(health.outbox, 0);
}

TEST_F(FleetSyncTest, WakePublishesTheOutboxSoonWithoutAnotherCall) {
  FleetSync& sync = Start();
  // Past the drainer's first look at the outbox at start.
  absl::SleepFor(absl::Milliseconds(100));
  const Record record = TestRecord(12);
  ASSERT_TRUE(store_->PutForFleet(record).ok());
  sync.Wake();
  // Unwoken, the drainer would look again only a second after its first
  // look; woken, it publishes at once.
  const absl::Time until = absl::Now() + absl::Milliseconds(500);
  while (!InFleet(KeyOf(record)).has_value() && absl::Now() < until) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_TRUE(InFleet(KeyOf(record)).has_value());
  EXPECT_EQ(sync.Health().published, 1);
}

TEST_F(FleetSyncTest, StopPublishesWhatIsLeftInTheOutbox) {
  FleetSync& sync = Start();
  const Record record = TestRecord(13);
  ASSERT_TRUE(store_->PutForFleet(record).ok());
  sync.Stop();
  EXPECT_EQ(*store_->OutboxSize(), 0);
  EXPECT_TRUE(InFleet(KeyOf(record)).has_value());
}

TEST_F(FleetSyncTest, HealthNamesTheDatabaseWithoutItsPassword) {
  FleetSync& sync = Start();
  const std::string database = sync.Health().database;
  EXPECT_NE(database, "");
  EXPECT_EQ(database.find(PostgresServer::kPassword), std::string::npos)
      << database;
}

TEST_F(FleetSyncTest, AnUnreachableDatabaseIsReportedSkippedForTheRetryWindowAndLeftLater) {
  FleetSync::Options options;
  options.retry = absl::Seconds(2);
  FleetSync& sync = Start(options);
  const ValidKey key = KeyOf(TestRecord(14));
  ASSERT_TRUE(sync.Reachable());
  ASSERT_TRUE(server()->Stop("fast"));

  EXPECT_EQ(sync.Resolve(key).outcome, FleetSync::Outcome::kUnavailable);
  FleetHealth down = sync.Health();
  EXPECT_FALSE(down.connected);
  EXPECT_GE(down.errors, 1);
  EXPECT_NE(down.last_error, "");
  EXPECT_GT(down.last_error_us, 0);
  // Within the retry window the fleet is not asked at all.
  EXPECT_FALSE(sync.Reachable());
  const int64_t errors = sync.Health().errors;
  EXPECT_EQ(sync.Resolve(key).outcome, FleetSync::Outcome::kUnavailable);
  EXPECT_FALSE(sync.Fetch(key).has_value());
  EXPECT_EQ(sync.Health().errors, errors);

  std::string error;
  ASSERT_TRUE(server()->Start(&error)) << error;
  const absl::Time until = absl::Now() + absl::Seconds(20);
  FleetSync::Outcome outcome = FleetSync::Outcome::kUnavailable;
  while (outcome == FleetSync::Outcome::kUnavailable && absl::Now() < until) {
    absl::SleepFor(absl::Milliseconds(100));
    outcome = sync.Resolve(key).outcome;
  }
  EXPECT_EQ(outcome, FleetSync::Outcome::kClaimed);
  EXPECT_TRUE(sync.Health().connected);
}

}  // namespace
}  // namespace tunedb
