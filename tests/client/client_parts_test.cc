// The client's parts on their own: ValidateClientOptions, the value
// conversions, CachedAnswers' entry rules and DatabaseFallback.
#include <gtest/gtest.h>

#include <string>

#include "client/answer_values.h"
#include "client/cached_answers.h"
#include "client/database_fallback.h"
#include "client/validate_client_options.h"
#include "client_test_util.h"
#include "store/store.h"
#include "tunedb/client.h"

namespace tunedb {
namespace {

using testing_util::OkResult;
using testing_util::TempDir;
using testing_util::TestKey;

TEST(ValidateClientOptionsTest, DefaultsAreValid) {
  EXPECT_TRUE(ValidateClientOptions(ClientOptions{}).ok());
}

TEST(ValidateClientOptionsTest, NamesTheWrongField) {
  auto code = [](void (*edit)(ClientOptions&)) {
    ClientOptions o;
    edit(o);
    return ValidateClientOptions(o).code();
  };
  constexpr absl::StatusCode kBad = absl::StatusCode::kInvalidArgument;
  EXPECT_EQ(code([](ClientOptions& o) { o.address.clear(); }), kBad);
  EXPECT_EQ(code([](ClientOptions& o) { o.cache_capacity = -1; }), kBad);
  EXPECT_EQ(code([](ClientOptions& o) {
              o.tune_deadline = absl::ZeroDuration();
            }),
            kBad);
  EXPECT_EQ(code([](ClientOptions& o) {
              o.negative_ttl = absl::Milliseconds(-1);
            }),
            kBad);
  EXPECT_EQ(code([](ClientOptions& o) {
              o.reconnect_backoff_max = o.reconnect_backoff_min / 2;
            }),
            kBad);
  EXPECT_EQ(code([](ClientOptions& o) { o.background_queue_capacity = 0; }),
            kBad);
  EXPECT_EQ(code([](ClientOptions& o) { o.job_id = "bad job id!"; }), kBad);
  // lookup_deadline may be 0 (every miss skips the Lookup).
  EXPECT_EQ(code([](ClientOptions& o) {
              o.lookup_deadline = absl::ZeroDuration();
            }),
            absl::StatusCode::kOk);
}

TEST(AnswerValuesTest, ConvertsOneWayEach) {
  const AlgoResult r = OkResult(7, 4096, MathType::kTensorOp);
  const Answer a = AnswerFrom(Source::kDaemon, r);
  EXPECT_EQ(a.source, Source::kDaemon);
  EXPECT_EQ(a.algo, 7);
  EXPECT_EQ(a.math_type, MathType::kTensorOp);
  EXPECT_EQ(a.workspace_bytes, 4096);
  const AlgoResult back = ResultOf(a);
  EXPECT_EQ(back.algo, 7);
  EXPECT_EQ(back.workspace_bytes, 4096);

  const CacheValue v = CacheValueFrom(CacheValue::kTuned, r, 99);
  EXPECT_EQ(v.deadline_ms, 99);
  const Answer cached = AnswerFromCached(v);
  EXPECT_EQ(cached.source, Source::kCache);
  EXPECT_EQ(cached.algo, 7);
  EXPECT_EQ(
      AnswerFromCached(CacheValueFrom(CacheValue::kPredicted, r, 0)).source,
      Source::kPredicted);
  CacheValue none;
  none.kind = CacheValue::kNone;
  EXPECT_FALSE(AnswerFromCached(none).ok());
}

TEST(AnswerValuesTest, DeadlinesAndSlotTexts) {
  EXPECT_EQ(DeadlineAfter(100, absl::Milliseconds(50)), 150);
  EXPECT_EQ(DeadlineAfter(100, absl::InfiniteDuration()), kNever);
  const ProblemKey key = TestKey(3);
  Constraints det;
  det.deterministic_only = true;
  EXPECT_NE(SlotText(key, Constraints{}), SlotText(key, det));
  EXPECT_NE(SlotText(key, Constraints{}), SlotText(TestKey(4), Constraints{}));
  EXPECT_EQ(SlotText(key, det), SlotText(key, det));
}

TEST(CachedAnswersTest, WithoutACacheEveryLookupMisses) {
  ClientOptions o;
  o.cache_capacity = 0;
  CachedAnswers cached(o);
  const ProblemKey key = TestKey(1);
  const CacheSlot slot = cached.MakeSlot(key, {});
  EXPECT_FALSE(slot.packable);
  cached.PutTuned(slot, OkResult(1), 5);
  CacheSlot found;
  CacheValue v;
  bool refresh = false;
  EXPECT_FALSE(cached.Lookup(key, {}, &found, &v, &refresh));
  EXPECT_EQ(cached.size(), 0);
}

TEST(CachedAnswersTest, ProvisionalAnswersNeverReplaceTunedOnes) {
  ClientOptions o;
  CachedAnswers cached(o);
  const ProblemKey key = TestKey(2);
  const CacheSlot slot = cached.MakeSlot(key, {});
  ASSERT_TRUE(slot.packable);
  cached.PutTuned(slot, OkResult(4), 1234);
  cached.PutProvisional(slot, CacheValue::kHeuristic, OkResult(9));
  CacheSlot found;
  CacheValue v;
  bool refresh = false;
  ASSERT_TRUE(cached.Lookup(key, {}, &found, &v, &refresh));
  EXPECT_EQ(v.kind, CacheValue::kTuned);
  EXPECT_EQ(v.algo, 4);
  EXPECT_EQ(cached.MeasuredAt(slot), 1234);
  cached.Clear();
  EXPECT_FALSE(cached.Lookup(key, {}, &found, &v, &refresh));
}

TEST(DatabaseFallbackTest, WithoutAFileNothingOpens) {
  DatabaseFallback none("");
  EXPECT_FALSE(none.waiting());
  none.MaybeOpen();
  EXPECT_FALSE(none.open());
  EXPECT_FALSE(none.Find(TestKey(1), {}).has_value());

  TempDir dir;
  DatabaseFallback missing(dir.File("missing/none.db"));
  EXPECT_TRUE(missing.waiting());
  missing.MaybeOpen();
  EXPECT_FALSE(missing.open());
  EXPECT_TRUE(missing.waiting());
}

TEST(DatabaseFallbackTest, FindsTheStoredChoice) {
  TempDir dir;
  const std::string path = dir.File("tunedb.db");
  const ProblemKey stored = TestKey(5);
  {
    Store::Options so;
    so.path = path;
    auto store = Store::Open(so);
    ASSERT_TRUE(store.ok()) << store.status();
    Record r;
    r.key = stored;
    r.results = {OkResult(6, 512, MathType::kTensorOp)};
    r.measured_at_us = 1234;
    r.finder = "simulated";
    ASSERT_TRUE((*store)->Put(r).ok());
  }
  DatabaseFallback db(path);
  db.MaybeOpen();
  ASSERT_TRUE(db.open());
  EXPECT_FALSE(db.waiting());
  std::optional<DatabaseFallback::Choice> c = db.Find(stored, {});
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->choice.algo, 6);
  EXPECT_EQ(c->measured_at_us, 1234);
  EXPECT_FALSE(db.Find(TestKey(6), {}).has_value());
}

}  // namespace
}  // namespace tunedb
