// PendingSearch and InflightSearches: one search's waiters (its end, its
// deadline, a caller gone, held back), coalescing by key text, and the rule
// of which record a revalidate_older_driver Tune re-times (tune_mode.h).
#include "server/tuning/pending_search.h"

#include <memory>
#include <thread>

#include "gtest/gtest.h"
#include "server/tuning/inflight_searches.h"
#include "server/tuning/tune_mode.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

using testing_util::TestKey;
using testing_util::TestRecord;

std::shared_ptr<PendingSearch> MakeSearch(int64_t n, bool when_idle = false) {
  return std::make_shared<PendingSearch>(
      SearchRequest{ValidKey::Make(TestKey(n)).value()}, when_idle);
}

TEST(PendingSearchTest, WaitersGetTheResultOnceFinished) {
  auto search = MakeSearch(8);
  auto record = std::make_shared<const Record>(TestRecord(1));
  std::thread finisher([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    search->Finish(record, /*searched=*/true);
  });
  absl::StatusOr<SearchOutcome> got =
      search->Wait(false, absl::Now() + absl::Seconds(30), {});
  finisher.join();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->record, record);
  EXPECT_TRUE(got->searched);
  EXPECT_FALSE(got->held);
  EXPECT_FALSE(got->waited_on_fleet);
}

TEST(PendingSearchTest, AFailedSearchFailsItsWaiters) {
  auto search = MakeSearch(8);
  search->Finish(absl::InternalError("boom"), true);
  EXPECT_EQ(search->Wait(false, absl::InfiniteFuture(), {}).status().code(),
            absl::StatusCode::kInternal);
}

TEST(PendingSearchTest, TheDeadlineAndAGoneCallerEndTheWait) {
  auto search = MakeSearch(8);
  EXPECT_EQ(search->Wait(false, absl::Now() + absl::Milliseconds(60), {})
                .status()
                .code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(search->Wait(false, absl::InfiniteFuture(), [] { return true; })
                .status()
                .code(),
            absl::StatusCode::kCancelled);
}

TEST(PendingSearchTest, HeldIsAnsweredAtOnceOnlyWhenAsked) {
  auto search = MakeSearch(8, /*when_idle=*/true);
  EXPECT_TRUE(search->when_idle());
  EXPECT_TRUE(search->HoldForPrograms());
  EXPECT_FALSE(search->HoldForPrograms());  // counted once
  absl::StatusOr<SearchOutcome> got =
      search->Wait(true, absl::InfiniteFuture(), {});
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->held);
  EXPECT_EQ(got->record, nullptr);
  // A kNow caller joined: no longer held, no longer waiting for idle.
  search->RunNow();
  EXPECT_FALSE(search->when_idle());
  EXPECT_EQ(search->Wait(true, absl::Now() + absl::Milliseconds(60), {})
                .status()
                .code(),
            absl::StatusCode::kDeadlineExceeded);
}

TEST(PendingSearchTest, TheFleetIsAskedOnce) {
  auto search = MakeSearch(8);
  EXPECT_TRUE(search->FirstFleetAsk());
  EXPECT_FALSE(search->FirstFleetAsk());
  search->MarkWaitedOnFleet();
  search->Finish(std::make_shared<const Record>(TestRecord(1)), false);
  absl::StatusOr<SearchOutcome> got =
      search->Wait(false, absl::InfiniteFuture(), {});
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->waited_on_fleet);
  EXPECT_FALSE(got->searched);
}

TEST(InflightSearchesTest, ASecondCallerJoinsTheSearchInFlight) {
  InflightSearches inflight;
  auto first = MakeSearch(8);
  int joins = 0;
  auto join = [&](PendingSearch&) { ++joins; };
  auto started = inflight.JoinOrStart(
      "k", join,
      [&]() -> absl::StatusOr<std::shared_ptr<PendingSearch>> {
        return first;
      });
  ASSERT_TRUE(started.ok());
  EXPECT_FALSE(started->joined);
  EXPECT_TRUE(inflight.Contains("k"));
  auto joined = inflight.JoinOrStart(
      "k", join,
      [&]() -> absl::StatusOr<std::shared_ptr<PendingSearch>> {
        ADD_FAILURE() << "started a second search";
        return nullptr;
      });
  ASSERT_TRUE(joined.ok());
  EXPECT_TRUE(joined->joined);
  EXPECT_EQ(joined->search, first);
  EXPECT_EQ(joins, 1);
  inflight.Remove("k");
  EXPECT_FALSE(inflight.Contains("k"));
}

TEST(InflightSearchesTest, NothingIsEnteredWhereTheStartStartsNone) {
  InflightSearches inflight;
  auto none = inflight.JoinOrStart(
      "k", [](PendingSearch&) {},
      []() -> absl::StatusOr<std::shared_ptr<PendingSearch>> {
        return nullptr;
      });
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->search, nullptr);
  EXPECT_FALSE(inflight.Contains("k"));
  auto failed = inflight.JoinOrStart(
      "k", [](PendingSearch&) {},
      []() -> absl::StatusOr<std::shared_ptr<PendingSearch>> {
        return absl::ResourceExhaustedError("full");
      });
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_FALSE(inflight.Contains("k"));
}

TEST(TuneModeTest, OnlyAnOlderDriversRecordIsRetimedAndOnlyWhenAsked) {
  Record record = TestRecord(1);
  record.driver_version = "550.54.15";
  EXPECT_TRUE(RetimesOlderDriver(true, &record, "575.57.08"));
  EXPECT_FALSE(RetimesOlderDriver(false, &record, "575.57.08"));
  EXPECT_FALSE(RetimesOlderDriver(true, &record, "550.54.15"));
  EXPECT_FALSE(RetimesOlderDriver(true, &record, "535.00.00"));
  EXPECT_FALSE(RetimesOlderDriver(true, nullptr, "575.57.08"));
}

}  // namespace
}  // namespace tunedb
