// RecordCache: a bounded map from key text to record that drops the least
// recently used entry first, shared by the tuning core's threads.
#include "server/tuning/record_cache.h"

#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

using testing_util::TestRecord;

std::shared_ptr<const Record> MakeRecord(int64_t n) {
  return std::make_shared<const Record>(TestRecord(n));
}

TEST(RecordCacheTest, GetReturnsTheRecordPutUnderTheKeyAndNullptrForOthers) {
  RecordCache cache(4);
  auto record = MakeRecord(1);
  cache.Put("a", record);
  EXPECT_EQ(cache.Get("a"), record);
  EXPECT_EQ(cache.Get("b"), nullptr);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(RecordCacheTest, PutOfACachedKeyReplacesItsRecord) {
  RecordCache cache(4);
  auto first = MakeRecord(1);
  auto second = MakeRecord(2);
  cache.Put("a", first);
  cache.Put("a", second);
  EXPECT_EQ(cache.Get("a"), second);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(RecordCacheTest, EvictsLeastRecentlyUsedWhenFull) {
  RecordCache cache(2);
  auto a = MakeRecord(1), b = MakeRecord(2), c = MakeRecord(3);
  cache.Put("a", a);
  cache.Put("b", b);
  // "a" was read last, so "b" is the least recently used.
  ASSERT_EQ(cache.Get("a"), a);
  cache.Put("c", c);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.Get("b"), nullptr);
  EXPECT_EQ(cache.Get("a"), a);
  EXPECT_EQ(cache.Get("c"), c);
}

TEST(RecordCacheTest, EvictsTheOldestPutWhenNothingWasRead) {
  RecordCache cache(2);
  cache.Put("a", MakeRecord(1));
  cache.Put("b", MakeRecord(2));
  cache.Put("c", MakeRecord(3));
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.Get("a"), nullptr);
  EXPECT_NE(cache.Get("b"), nullptr);
  EXPECT_NE(cache.Get("c"), nullptr);
}

TEST(RecordCacheTest, ReplacingARecordMakesItsKeyMostRecentlyUsed) {
  RecordCache cache(2);
  cache.Put("a", MakeRecord(1));
  cache.Put("b", MakeRecord(2));
  auto replacement = MakeRecord(3);
  cache.Put("a", replacement);
  cache.Put("c", MakeRecord(4));
  EXPECT_EQ(cache.Get("b"), nullptr);
  EXPECT_EQ(cache.Get("a"), replacement);
  EXPECT_NE(cache.Get("c"), nullptr);
}

TEST(RecordCacheTest, ARecordEvictedStaysValidForWhoeverHoldsIt) {
  RecordCache cache(1);
  cache.Put("a", MakeRecord(1));
  std::shared_ptr<const Record> held = cache.Get("a");
  cache.Put("b", MakeRecord(2));
  ASSERT_EQ(cache.Get("a"), nullptr);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->key, TestRecord(1).key);
}

TEST(RecordCacheTest, ZeroCapacityCachesNothing) {
  RecordCache cache(0);
  cache.Put("a", MakeRecord(1));
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.Get("a"), nullptr);
}

TEST(RecordCacheTest, ClearDropsEveryRecordAndTheCacheFillsAgain) {
  RecordCache cache(4);
  cache.Put("a", MakeRecord(1));
  cache.Put("b", MakeRecord(2));
  cache.Clear();
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.Get("a"), nullptr);
  EXPECT_EQ(cache.Get("b"), nullptr);
  auto c = MakeRecord(3);
  cache.Put("c", c);
  EXPECT_EQ(cache.Get("c"), c);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(RecordCacheTest, ConcurrentPutsGetsAndClearsKeepItWithinCapacity) {
  constexpr size_t kCapacity = 16;
  RecordCache cache(kCapacity);
  std::vector<std::shared_ptr<const Record>> records;
  for (int i = 0; i < 8; ++i) records.push_back(MakeRecord(i + 1));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const std::string key = std::to_string((t * 7 + i) % 40);
        const auto& record = records[i % records.size()];
        cache.Put(key, record);
        std::shared_ptr<const Record> got = cache.Get(key);
        // Another thread may have replaced or evicted it, never with
        // anything but one of the records put.
        if (got != nullptr) {
          EXPECT_NE(std::find(records.begin(), records.end(), got),
                    records.end());
        }
        if (t == 0 && i % 500 == 499) cache.Clear();
        EXPECT_LE(cache.size(), kCapacity);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_LE(cache.size(), kCapacity);
}

TEST(RecordCacheTest, AReadThatFoundNothingIsKnownAbsent) {
  RecordCache cache(4);
  EXPECT_FALSE(cache.Find("a").known);
  cache.PutRead("a", nullptr, cache.generation());
  RecordCache::Entry entry = cache.Find("a");
  EXPECT_TRUE(entry.known);
  EXPECT_EQ(entry.record, nullptr);
  EXPECT_EQ(cache.Get("a"), nullptr);
}

TEST(RecordCacheTest, APutReplacesAKnownAbsence) {
  RecordCache cache(4);
  cache.PutRead("a", nullptr, cache.generation());
  auto record = MakeRecord(1);
  cache.Put("a", record);
  EXPECT_EQ(cache.Find("a").record, record);
}

TEST(RecordCacheTest, AReadBegunBeforeAWriteIsNotKept) {
  RecordCache cache(4);
  const uint64_t read_at = cache.generation();
  cache.Put("b", MakeRecord(2));  // a write while "a" was being read
  cache.PutRead("a", nullptr, read_at);
  EXPECT_FALSE(cache.Find("a").known);
  const uint64_t again = cache.generation();
  cache.Clear();
  cache.PutRead("a", MakeRecord(1), again);
  EXPECT_FALSE(cache.Find("a").known);
}

TEST(RecordCacheTest, KnownAbsencesCountTowardTheCapacity) {
  RecordCache cache(2);
  for (const char* key : {"a", "b", "c"}) {
    cache.PutRead(key, nullptr, cache.generation());
  }
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_FALSE(cache.Find("a").known);
  EXPECT_TRUE(cache.Find("c").known);
}

}  // namespace
}  // namespace tunedb
