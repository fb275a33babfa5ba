// The fleet database layer (store/fleet/) against a real PostgreSQL server
// started by the suite: credentials and errors, the schema version, every
// host's measurement and the conflict rule, leases, and job claims.
#include <stdlib.h>
#include <sys/stat.h>

#include <atomic>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "store/fleet/fleet_database.h"
#include "store/fleet/fleet_jobs.h"
#include "store/fleet/fleet_store.h"
#include "tests/testing/postgres_server.h"
#include "tests/testing/postgres_test.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

using testing_util::PostgresServer;
using testing_util::TempDir;
using testing_util::TestDevice;
using testing_util::TestKey;
using testing_util::TestRecord;

class FleetStoreTest : public testing_util::PostgresTest {
 protected:
  void SetUp() override {
    PostgresTest::SetUp();
    options_.url = url_;
  }

  std::unique_ptr<FleetStore> MustOpen() {
    auto store = FleetStore::Open(options_);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }

  static Record Measured(const std::string& host, int64_t at_us, int repeats,
                         bool verified = true) {
    Record r = TestRecord(1);
    r.host = host;
    r.measured_at_us = at_us;
    r.repeats = repeats;
    r.verified = verified;
    return r;
  }

  FleetOptions options_;
};

TEST_F(FleetStoreTest, ARecordPublishedIsReadBackWithEveryField) {
  auto store = MustOpen();
  Record record = TestRecord(1);
  ASSERT_TRUE(store->Publish({record}, "me").ok());
  auto got = store->Get(record.key);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->key, record.key);
  EXPECT_EQ((*got)->host, record.host);
  EXPECT_EQ((*got)->measured_at_us, record.measured_at_us);
  ASSERT_EQ((*got)->results.size(), record.results.size());
  EXPECT_EQ((*got)->results[0].algo, record.results[0].algo);
  EXPECT_EQ((*got)->served_count, 0);
  auto missing = store->Get(TestKey(99));
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
}

TEST_F(FleetStoreTest, EveryHostsMeasurementIsKeptAndTheRuleChoosesTheAnswer) {
  auto store = MustOpen();
  ASSERT_TRUE(store->Publish({Measured("host-a", 1000, 5)}, "a").ok());
  ASSERT_TRUE(store->Publish({Measured("host-b", 2000, 3)}, "b").ok());
  ASSERT_TRUE(store->Publish({Measured("host-c", 3000, 5, false)}, "c").ok());
  auto all = store->Measurements(TestRecord(1).key);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 3u);
  // Verified first, then more repeats, then the later one.
  EXPECT_EQ((*all)[0].host, "host-a");
  EXPECT_EQ((*all)[1].host, "host-b");
  EXPECT_EQ((*all)[2].host, "host-c");
  EXPECT_EQ((*store->Get(TestRecord(1).key))->host, "host-a");

  // host-b measures again with as many repeats, later: it answers now.
  ASSERT_TRUE(store->Publish({Measured("host-b", 4000, 5)}, "b").ok());
  EXPECT_EQ((*store->Get(TestRecord(1).key))->host, "host-b");
  // An older measurement of a host never replaces its newer one.
  ASSERT_TRUE(store->Publish({Measured("host-b", 1500, 9)}, "b").ok());
  auto b = store->Measurements(TestRecord(1).key);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->size(), 3u);
  for (const Record& r : *b) {
    if (r.host == "host-b") {
      EXPECT_EQ(r.measured_at_us, 4000);
    }
  }
}

TEST_F(FleetStoreTest, ALeaseIsExclusiveUntilItExpiresOrIsReleasedByPublishing) {
  auto store = MustOpen();
  const ProblemKey key = TestRecord(1).key;
  auto first = store->TryClaim(key, "a", absl::Milliseconds(300));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->claimed);
  auto second = store->TryClaim(key, "b", absl::Seconds(10));
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->claimed);
  EXPECT_EQ(second->holder, "a");
  // Renewed, it stays a's past its first expiry.
  ASSERT_EQ(*store->Renew({key.ToText()}, "a", absl::Milliseconds(600)), 1);
  absl::SleepFor(absl::Milliseconds(350));
  EXPECT_FALSE(store->TryClaim(key, "b", absl::Seconds(10))->claimed);
  absl::SleepFor(absl::Milliseconds(400));
  EXPECT_TRUE(store->TryClaim(key, "b", absl::Seconds(10))->claimed);
  // a lost it: its renewal holds nothing.
  EXPECT_EQ(*store->Renew({key.ToText()}, "a", absl::Seconds(1)), 0);
  // Publishing releases the publisher's lease.
  ASSERT_TRUE(store->Publish({TestRecord(1)}, "b").ok());
  EXPECT_TRUE(store->TryClaim(key, "c", absl::Seconds(1))->claimed);
}

TEST_F(FleetStoreTest, ConcurrentClaimersTakeEachJobOnce) {
  auto jobs = FleetJobs::Open(options_);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  std::vector<ProblemKey> keys;
  for (int n = 1; n <= 200; ++n) keys.push_back(TestKey(n));
  ASSERT_EQ((*jobs)->Enqueue("b", keys)->added, 200);
  const std::vector<std::string> devices = {testing_util::TestDevice().ToText()};
  std::mutex mu;
  std::multiset<int64_t> claimed;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const std::string holder = absl::StrCat("h", t);
      while (true) {
        auto job = (*jobs)->Claim(devices, holder, absl::Seconds(30));
        ASSERT_TRUE(job.ok()) << job.status();
        if (!job->has_value()) return;
        ASSERT_TRUE((*jobs)->Finish(**job, holder, true, absl::OkStatus(), 3).ok());
        std::lock_guard<std::mutex> lock(mu);
        claimed.insert((*job)->id);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(claimed.size(), 200u);
  EXPECT_EQ(std::set<int64_t>(claimed.begin(), claimed.end()).size(), 200u);
  auto progress = (*jobs)->Progress("b");
  ASSERT_TRUE(progress.ok());
  EXPECT_EQ(progress->done, 200);
}

TEST_F(FleetStoreTest, AFailedJobIsRetriedThenFailedAndARerunQueuesItAgain) {
  auto jobs = FleetJobs::Open(options_);
  ASSERT_TRUE(jobs.ok());
  ASSERT_TRUE((*jobs)->Enqueue("f", {TestKey(1)}).ok());
  const std::vector<std::string> devices = {testing_util::TestDevice().ToText()};
  for (int attempt = 1; attempt <= 2; ++attempt) {
    auto job = (*jobs)->Claim(devices, "h", absl::Seconds(30));
    ASSERT_TRUE(job.ok() && job->has_value());
    EXPECT_EQ((*job)->attempts, attempt);
    ASSERT_TRUE((*jobs)
                    ->Finish(**job, "h", false, absl::InternalError("boom"), 2)
                    .ok());
  }
  auto progress = (*jobs)->Progress("f");
  EXPECT_EQ(progress->failed, 1);
  ASSERT_EQ(progress->errors.size(), 1u);
  EXPECT_NE(progress->errors[0].find("boom"), std::string::npos);
  auto again = (*jobs)->Enqueue("f", {TestKey(1)});
  EXPECT_EQ(again->added, 0);
  EXPECT_EQ(again->requeued, 1);
  EXPECT_EQ((*jobs)->Progress("f")->queued, 1);
}

TEST_F(FleetStoreTest, ANewerSchemaIsRefusedWithAClearError) {
  ASSERT_NE(MustOpen(), nullptr);
  server()->Sql(db_, "UPDATE tunedb_fleet_schema SET version = 7");
  auto store = FleetStore::Open(options_);
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(store.status())) << store.status();
  EXPECT_NE(store.status().message().find(
                "has tunedb fleet schema version 7, newer than the newest "
                "this build understands (2)"),
            std::string::npos)
      << store.status();
}

TEST_F(FleetStoreTest, AVersionOneSchemaIsMigratedAndKeepsItsJobs) {
  ASSERT_NE(MustOpen(), nullptr);
  {
    auto jobs = FleetJobs::Open(options_);
    ASSERT_TRUE(jobs.ok()) << jobs.status();
    ASSERT_EQ((*jobs)->Enqueue("old", {TestKey(1)})->added, 1);
  }
  // Version 1: the job table without revalidate_from.
  server()->Sql(db_, "ALTER TABLE fleet_jobs DROP COLUMN revalidate_from");
  server()->Sql(db_, "UPDATE tunedb_fleet_schema SET version = 1");
  auto jobs = FleetJobs::Open(options_);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ(SqlInt("SELECT version FROM tunedb_fleet_schema"), 2);
  EXPECT_EQ((*jobs)->Progress("old")->queued, 1);
  ASSERT_EQ((*jobs)->Enqueue("new", {TestKey(2)}, 91400)->added, 1);
  auto claimed = (*jobs)->Claim({TestDevice().ToText()}, "host-a",
                                absl::Seconds(30));
  ASSERT_TRUE(claimed.ok() && claimed->has_value()) << claimed.status();
  EXPECT_EQ((*claimed)->key, TestKey(1));  // the older job first
  EXPECT_EQ((*claimed)->revalidate_from, 0);
  claimed = (*jobs)->Claim({TestDevice().ToText()}, "host-a",
                           absl::Seconds(30));
  ASSERT_TRUE(claimed.ok() && claimed->has_value()) << claimed.status();
  EXPECT_EQ((*claimed)->key, TestKey(2));
  EXPECT_EQ((*claimed)->revalidate_from, 91400);
}

TEST_F(FleetStoreTest, ABatchNameHoldsOneKindOfJob) {
  ASSERT_NE(MustOpen(), nullptr);
  auto jobs = FleetJobs::Open(options_);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ((*jobs)->Enqueue("b", {TestKey(1)}, 91400)->added, 1);
  EXPECT_EQ((*jobs)->Enqueue("b", {TestKey(2)}, 91400)->added, 1);
  for (int other : {0, 90100}) {
    auto refused = (*jobs)->Enqueue("b", {TestKey(3)}, other);
    EXPECT_TRUE(absl::IsFailedPrecondition(refused.status()))
        << refused.status();
  }
  EXPECT_EQ((*jobs)->Progress("b")->queued, 2);
}

TEST_F(FleetStoreTest, AWrongPasswordIsUnauthenticatedAndNeverShown) {
  options_.url = server()->Url(db_, "wrong-password");
  auto store = FleetStore::Open(options_);
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(absl::IsUnauthenticated(store.status())) << store.status();
  EXPECT_NE(store.status().message().find("password authentication failed"),
            std::string::npos);
  EXPECT_EQ(store.status().message().find("wrong-password"), std::string::npos);
}

TEST_F(FleetStoreTest, AnUnreachableHostIsUnavailableWithinTheConnectTimeout) {
  options_.url = absl::StrCat("postgresql://tunedb@127.0.0.1:1/", db_);
  options_.connect_timeout_s = 2;
  absl::Time start = absl::Now();
  auto store = FleetStore::Open(options_);
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(absl::IsUnavailable(store.status())) << store.status();
  EXPECT_NE(store.status().message().find("unreachable"), std::string::npos);
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
}

TEST_F(FleetStoreTest, APasswordFileOrThePgEnvironmentSuppliesThePassword) {
  TempDir dir;
  const std::string passfile = dir.File("pgpass");
  std::ofstream(passfile) << "127.0.0.1:" << server()->port() << ":" << db_
                          << ":tunedb:" << PostgresServer::kPassword << "\n";
  chmod(passfile.c_str(), 0600);
  options_.url = absl::StrCat("postgresql://tunedb@127.0.0.1:", server()->port(),
                              "/", db_);
  options_.password_file = passfile;
  EXPECT_TRUE(FleetStore::Open(options_).ok());

  options_.password_file = dir.File("none");
  ASSERT_EQ(setenv("PGPASSWORD", PostgresServer::kPassword, 1), 0);
  auto from_env = FleetStore::Open(options_);
  unsetenv("PGPASSWORD");
  EXPECT_TRUE(from_env.ok()) << from_env.status();
}

TEST_F(FleetStoreTest, ABadUrlIsInvalidArgument) {
  options_.url = "postgresql://[::1";
  auto store = FleetStore::Open(options_);
  EXPECT_TRUE(absl::IsInvalidArgument(store.status())) << store.status();
}

}  // namespace
}  // namespace tunedb
