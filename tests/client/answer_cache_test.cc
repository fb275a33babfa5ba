// AnswerCache and PackKey: the lock-free structure under Client::Get.
#include "client/answer_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "client/packed_key.h"
#include "client_test_util.h"

namespace tunedb {
namespace {

PackedKey Packed(int64_t n, int device = 1) {
  PackedKey k;
  EXPECT_TRUE(PackKey(device, testing_util::TestKey(n).problem, {}, &k));
  return k;
}

CacheValue Tuned(int algo, int64_t deadline = INT64_MAX) {
  CacheValue v;
  v.kind = CacheValue::kTuned;
  v.algo = algo;
  v.math_type = MathType::kTensorOp;
  v.workspace_bytes = algo * 10;
  v.deadline_ms = deadline;
  return v;
}

TEST(PackKeyTest, DistinguishesEveryField) {
  const ProblemKey base = testing_util::TestKey(4);
  PackedKey a;
  ASSERT_TRUE(PackKey(1, base.problem, {}, &a));
  auto differs = [&](ConvProblem p, Constraints c = {}, int device = 1) {
    PackedKey b;
    EXPECT_TRUE(PackKey(device, p, c, &b));
    return !(a == b) && a.Hash() != b.Hash();
  };
  ConvProblem p = base.problem;
  p.n = 5;
  EXPECT_TRUE(differs(p));
  p = base.problem;
  p.dilation[1] = 2;
  EXPECT_TRUE(differs(p));
  p = base.problem;
  p.allow_tf32 = false;
  EXPECT_TRUE(differs(p));
  p = base.problem;
  p.layout = Layout::kNHWC;
  EXPECT_TRUE(differs(p));
  p = base.problem;
  p.api = ConvApi::kGraph;
  p.alignment = 16;
  EXPECT_TRUE(differs(p));
  ConvProblem aligned8 = p;
  aligned8.alignment = 8;
  PackedKey g16, g8;
  ASSERT_TRUE(PackKey(1, p, {}, &g16));
  ASSERT_TRUE(PackKey(1, aligned8, {}, &g8));
  EXPECT_FALSE(g16 == g8);
  Constraints c;
  c.max_workspace_bytes = 0;
  EXPECT_TRUE(differs(base.problem, c));
  c = {};
  c.deterministic_only = true;
  EXPECT_TRUE(differs(base.problem, c));
  EXPECT_TRUE(differs(base.problem, {}, 2));
}

TEST(PackKeyTest, RefusesValuesThatDoNotFit) {
  ConvProblem p = testing_util::TestKey(4).problem;
  PackedKey k;
  p.n = int64_t{1} << 33;
  EXPECT_FALSE(PackKey(1, p, {}, &k));
  p.n = -1;
  EXPECT_FALSE(PackKey(1, p, {}, &k));
  EXPECT_FALSE(PackKey(0, testing_util::TestKey(4).problem, {}, &k));
}

TEST(DeviceTableTest, InternsAndFinds) {
  DeviceTable t;
  DeviceKey a = testing_util::TestDevice();
  DeviceKey b = a;
  b.sm_count = 66;
  EXPECT_EQ(t.Find(a), 0);
  EXPECT_EQ(t.Intern(a), 1);
  EXPECT_EQ(t.Intern(b), 2);
  EXPECT_EQ(t.Intern(a), 1);
  EXPECT_EQ(t.Find(b), 2);
  for (int i = 0; i < DeviceTable::kMaxDevices; ++i) {
    DeviceKey d = a;
    d.cudnn_version = 1000 + i;
    t.Intern(d);
  }
  DeviceKey extra = a;
  extra.gpu_model = "one too many";
  EXPECT_EQ(t.Intern(extra), 0);
}

TEST(AnswerCacheTest, InsertLookupUpdate) {
  AnswerCache cache(64);
  const PackedKey k = Packed(1);
  CacheValue v;
  bool refresh = false;
  EXPECT_FALSE(cache.Lookup(k, k.Hash(), 0, &v, &refresh));
  cache.Insert(k, k.Hash(), Tuned(3), 123);
  ASSERT_TRUE(cache.Lookup(k, k.Hash(), 0, &v, &refresh));
  EXPECT_EQ(v.kind, CacheValue::kTuned);
  EXPECT_EQ(v.algo, 3);
  EXPECT_EQ(v.math_type, MathType::kTensorOp);
  EXPECT_EQ(v.workspace_bytes, 30);
  EXPECT_FALSE(refresh);
  EXPECT_EQ(cache.MeasuredAt(k, k.Hash()), 123);
  cache.Insert(k, k.Hash(), Tuned(5), 456);
  ASSERT_TRUE(cache.Lookup(k, k.Hash(), 0, &v, &refresh));
  EXPECT_EQ(v.algo, 5);
  EXPECT_EQ(cache.size(), 1);
  EXPECT_EQ(cache.MeasuredAt(k, k.Hash()), 456);
  EXPECT_FALSE(cache.Lookup(Packed(2), Packed(2).Hash(), 0, &v, &refresh));
}

TEST(AnswerCacheTest, ProvisionalAnswerDoesNotReplaceATunedOne) {
  AnswerCache cache(64);
  const PackedKey k = Packed(1);
  CacheValue guess;
  guess.kind = CacheValue::kHeuristic;
  guess.algo = 9;
  guess.deadline_ms = 1000;
  EXPECT_TRUE(cache.Insert(k, k.Hash(), guess, 0, /*keep_tuned=*/true));
  EXPECT_TRUE(cache.Insert(k, k.Hash(), Tuned(3), 1));
  EXPECT_FALSE(cache.Insert(k, k.Hash(), guess, 0, /*keep_tuned=*/true));
  CacheValue v;
  bool refresh = false;
  ASSERT_TRUE(cache.Lookup(k, k.Hash(), 0, &v, &refresh));
  EXPECT_EQ(v.kind, CacheValue::kTuned);
  EXPECT_EQ(v.algo, 3);
}

TEST(AnswerCacheTest, NegativeEntriesExpire) {
  AnswerCache cache(64);
  const PackedKey k = Packed(1);
  CacheValue neg;
  neg.kind = CacheValue::kNone;
  neg.deadline_ms = 1000;
  cache.Insert(k, k.Hash(), neg, 0);
  CacheValue v;
  bool refresh = false;
  EXPECT_TRUE(cache.Lookup(k, k.Hash(), 999, &v, &refresh));
  EXPECT_EQ(v.kind, CacheValue::kNone);
  EXPECT_FALSE(cache.Lookup(k, k.Hash(), 1000, &v, &refresh));
}

TEST(AnswerCacheTest, StaleTunedEntryAsksOneCallerToRefresh) {
  AnswerCache cache(64);
  const PackedKey k = Packed(1);
  cache.Insert(k, k.Hash(), Tuned(3, /*deadline=*/500), 1);
  CacheValue v;
  bool refresh = false;
  EXPECT_TRUE(cache.Lookup(k, k.Hash(), 499, &v, &refresh));
  EXPECT_FALSE(refresh);
  EXPECT_TRUE(cache.Lookup(k, k.Hash(), 500, &v, &refresh));
  EXPECT_TRUE(refresh);
  refresh = false;
  EXPECT_TRUE(cache.Lookup(k, k.Hash(), 600, &v, &refresh));
  EXPECT_FALSE(refresh) << "only one caller is asked per entry version";
  // Rewriting the entry arms it again.
  cache.Insert(k, k.Hash(), Tuned(3, 700), 1);
  EXPECT_TRUE(cache.Lookup(k, k.Hash(), 800, &v, &refresh));
  EXPECT_TRUE(refresh);
}

TEST(AnswerCacheTest, NeverHoldsMoreThanItsCapacity) {
  for (int64_t capacity : {1, 3, 8, 20, 100}) {
    AnswerCache cache(capacity);
    for (int n = 1; n <= 1000; ++n) {
      const PackedKey k = Packed(n);
      cache.Insert(k, k.Hash(), Tuned(n % 100), 0);
      ASSERT_LE(cache.size(), capacity);
    }
    EXPECT_LE(cache.capacity(), capacity);
    EXPECT_GE(cache.evictions(), 1000 - capacity);
  }
}

TEST(AnswerCacheTest, EvictsEntriesUnusedSinceTheLastSweep) {
  // One set of 8 ways: entries hit since the last sweep survive.
  AnswerCache cache(8);
  for (int n = 1; n <= 8; ++n) {
    const PackedKey k = Packed(n);
    cache.Insert(k, k.Hash(), Tuned(n), 0);
  }
  CacheValue v;
  bool refresh = false;
  // Insert a 9th: the CLOCK sweep clears all referenced flags and evicts
  // one; then keep hitting key 1 while adding more keys.
  for (int n = 9; n <= 30; ++n) {
    const PackedKey hot = Packed(1);
    ASSERT_TRUE(cache.Lookup(hot, hot.Hash(), 0, &v, &refresh)) << n;
    const PackedKey k = Packed(n);
    cache.Insert(k, k.Hash(), Tuned(n % 100), 0);
  }
  const PackedKey hot = Packed(1);
  EXPECT_TRUE(cache.Lookup(hot, hot.Hash(), 0, &v, &refresh));
  EXPECT_EQ(v.algo, 1);
}

TEST(AnswerCacheTest, ClearEmptiesIt) {
  AnswerCache cache(32);
  for (int n = 1; n <= 10; ++n) {
    const PackedKey k = Packed(n);
    cache.Insert(k, k.Hash(), Tuned(n), 0);
  }
  cache.Clear();
  EXPECT_EQ(cache.size(), 0);
  CacheValue v;
  bool refresh = false;
  const PackedKey k = Packed(3);
  EXPECT_FALSE(cache.Lookup(k, k.Hash(), 0, &v, &refresh));
}

TEST(AnswerCacheTest, ReadersNeverSeeTornEntries) {
  // Writers keep replacing entries of a small cache; every value readers
  // get must be the one written for that key.
  AnswerCache cache(16);
  constexpr int kKeys = 64;
  std::vector<PackedKey> keys;
  for (int n = 1; n <= kKeys; ++n) keys.push_back(Packed(n));
  std::atomic<bool> stop{false};
  std::atomic<int64_t> hits{0}, bad{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; !stop.load(); ++i) {
        const int n = (i * 13 + w * 7) % kKeys;
        CacheValue v = Tuned(n + 1);
        v.workspace_bytes = (n + 1) * 1000003;
        cache.Insert(keys[n], keys[n].Hash(), v, n);
      }
    });
  }
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      CacheValue v;
      bool refresh;
      for (int i = 0; i < 300000; ++i) {
        const int n = (i * 5 + r) % kKeys;
        if (cache.Lookup(keys[n], keys[n].Hash(), 0, &v, &refresh)) {
          ++hits;
          if (v.algo != n + 1 || v.workspace_bytes != (n + 1) * 1000003) ++bad;
        }
      }
    });
  }
  threads[2].join();
  threads[3].join();
  stop = true;
  threads[0].join();
  threads[1].join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(hits.load(), 0);
}

}  // namespace
}  // namespace tunedb
