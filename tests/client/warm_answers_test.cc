// WarmAnswers on its own: the replies one Warm brought, by key and
// constraints, each handed out once; the wait for a Warm in flight, bounded
// by its patience; a failed or never started Warm answers nothing.
#include "client/warm_answers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "client/client_counters.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

using testing_util::OkResult;
using testing_util::TestKey;

using Entries = std::vector<DaemonLink::WarmEntry>;

DaemonLink::WarmEntry Answered(const ProblemKey& key, const Constraints& c,
                               int algo) {
  DaemonLink::WarmEntry e;
  e.key = key;
  e.constraints = c;
  e.reply.choice = OkResult(algo);
  e.reply.measured_at_us = 1000;
  return e;
}

DaemonLink::WarmEntry NotStored(const ProblemKey& key) {
  DaemonLink::WarmEntry e;
  e.key = key;
  e.reply.status = absl::NotFoundError("nothing stored");
  return e;
}

Constraints Tight() {
  Constraints c;
  c.max_workspace_bytes = 1024;
  return c;
}

TEST(WarmAnswersTest, AReplyIsHandedOutOnceForItsKeyAndConstraintsOnly) {
  ClientCounters counters;
  WarmAnswers warm(absl::Seconds(60), counters);
  warm.Start([] {
    return Entries{Answered(TestKey(1), Constraints{}, 3),
                   Answered(TestKey(1), Tight(), 4), NotStored(TestKey(2))};
  });
  // Waits for the Warm (within its patience), then answers.
  std::optional<DaemonLink::Reply> r = warm.Take(TestKey(1), {}, true);
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE(r->status.ok());
  EXPECT_EQ(r->choice->algo, 3);
  EXPECT_EQ(r->measured_at_us, 1000);
  EXPECT_FALSE(warm.Take(TestKey(1), {}, true).has_value());
  r = warm.Take(TestKey(1), Tight(), true);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->choice->algo, 4);
  r = warm.Take(TestKey(2), {}, true);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(absl::IsNotFound(r->status));
  EXPECT_FALSE(warm.Take(TestKey(3), {}, true).has_value());
  EXPECT_EQ(counters.Sum(kWarmKeys), 3);
}

TEST(WarmAnswersTest, AWarmNeverStartedAnswersNothing) {
  ClientCounters counters;
  WarmAnswers warm(absl::Seconds(60), counters);
  EXPECT_FALSE(warm.Take(TestKey(1), {}, true).has_value());
}

TEST(WarmAnswersTest, AFailedWarmAnswersNothing) {
  ClientCounters counters;
  WarmAnswers warm(absl::Seconds(60), counters);
  warm.Start([]() -> absl::StatusOr<Entries> {
    return absl::UnimplementedError("an older daemon");
  });
  EXPECT_FALSE(warm.Take(TestKey(1), {}, true).has_value());
  EXPECT_EQ(counters.Sum(kWarmKeys), 0);
}

TEST(WarmAnswersTest, OnlyTheFirstStartMakesTheCall) {
  ClientCounters counters;
  std::atomic<int> calls{0};
  WarmAnswers warm(absl::Seconds(60), counters);
  for (int i = 0; i < 3; ++i) {
    warm.Start([&calls, i] {
      ++calls;
      return Entries{Answered(TestKey(1), {}, i)};
    });
  }
  std::optional<DaemonLink::Reply> r = warm.Take(TestKey(1), {}, true);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->choice->algo, 0);
  EXPECT_EQ(calls.load(), 1);
}

TEST(WarmAnswersTest, ATakeThatMayWaitGetsTheReplyOfAWarmStillInFlight) {
  ClientCounters counters;
  absl::Notification release;
  WarmAnswers warm(absl::Seconds(60), counters);
  warm.Start([&release] {
    release.WaitForNotification();
    return Entries{Answered(TestKey(1), {}, 5)};
  });
  // Without waiting, a Warm in flight answers nothing.
  EXPECT_FALSE(warm.Take(TestKey(1), {}, false).has_value());
  std::optional<DaemonLink::Reply> got;
  std::thread taker([&] { got = warm.Take(TestKey(1), {}, true); });
  release.Notify();
  taker.join();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->choice->algo, 5);
}

TEST(WarmAnswersTest, PastItsPatienceAWarmInFlightIsNotWaitedFor) {
  ClientCounters counters;
  absl::Notification release;
  WarmAnswers warm(absl::Milliseconds(20), counters);
  warm.Start([&release] {
    release.WaitForNotification();
    return Entries{Answered(TestKey(1), {}, 5)};
  });
  // Still in flight when the patience runs out: nothing, to look up.
  EXPECT_FALSE(warm.Take(TestKey(1), {}, true).has_value());
  EXPECT_FALSE(warm.Take(TestKey(1), {}, true).has_value());
  release.Notify();
}

}  // namespace
}  // namespace tunedb
