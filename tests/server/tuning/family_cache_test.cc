// FamilyCache over a real (in-memory) SQLite store: the families it keeps,
// the cuDNN versions it says the store may hold, and its predictions from
// the store's index of shapes, equal to PredictFrom over the whole family.
#include "server/tuning/family_cache.h"

#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "server/tuning/shape_predictor.h"
#include "tests/server/tuning/expect_same_prediction.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

using testing_util::ExpectSame;
using testing_util::TestRecord;

class FamilyCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Store::Options options;
    options.path = ":memory:";
    store_ = Store::Open(options).value();
  }

  // TestRecord(n) under cuDNN `version`, stored.
  Record Stored(int64_t n, int version) {
    Record r = TestRecord(n);
    r.key.device.cudnn_version = version;
    EXPECT_TRUE(store_->Put(r).ok());
    return r;
  }

  // The store's every record, in id order.
  FamilyCache::Records All() {
    FamilyCache::Records all;
    EXPECT_TRUE(store_
                    ->Query({}, 0, 0,
                            [&](const Record& r) {
                              all.push_back(std::make_shared<Record>(r));
                              return true;
                            })
                    .ok());
    return all;
  }

  std::unique_ptr<Store> store_;
};

// TestRecord(1) with another shape, whose fastest OK result is `algo` and
// whose OK results need `workspace` bytes.
Record Shaped(int64_t n, int64_t c, int64_t k, int64_t hw, int algo,
              int64_t workspace) {
  Record r = TestRecord(1);
  r.key.problem.n = n;
  r.key.problem.c = c;
  r.key.problem.k = k;
  r.key.problem.input = {hw, hw, 0};
  int ok = 0;
  for (AlgoResult& a : r.results) {
    if (a.status != AlgoStatus::kOk) continue;
    a.algo = ok == 0 ? algo : 100 + algo;
    a.launch = {ok == 0 ? 0.5 : 1.0, 0, 3};
    a.workspace_bytes = workspace;
    ++ok;
  }
  return r;
}

TEST_F(FamilyCacheTest, AStoreOfOneVersionHoldsNoOtherForItsKeys) {
  FamilyCache cache(store_.get(), absl::Hours(1), 100);
  EXPECT_FALSE(*cache.MayHoldOtherVersions(TestRecord(1).key));  // empty
  const Record r = Stored(1, 91900);
  cache.Clear();
  EXPECT_FALSE(*cache.MayHoldOtherVersions(r.key));
  ProblemKey older = r.key;
  older.device.cudnn_version = 91400;
  EXPECT_TRUE(*cache.MayHoldOtherVersions(older));
}

TEST_F(FamilyCacheTest, ARecordStoredUnderAnotherVersionCountsAtOnceWhenForgotten) {
  FamilyCache cache(store_.get(), absl::Hours(1), 100);
  const Record r = Stored(1, 91900);
  EXPECT_FALSE(*cache.MayHoldOtherVersions(r.key));  // kept for an hour
  const Record old = Stored(2, 91400);
  // Not told: the kept versions still answer.
  EXPECT_FALSE(*cache.MayHoldOtherVersions(r.key));
  cache.Forget(old.key);
  EXPECT_TRUE(*cache.MayHoldOtherVersions(r.key));
}

TEST_F(FamilyCacheTest, AFamilyIsReadAgainAfterARecordOfItIsStored) {
  FamilyCache cache(store_.get(), absl::Hours(1), 100);
  Stored(1, 91900);
  const Record second = Stored(2, 91900);
  ASSERT_EQ((*cache.Family(second.key))->size(), 2u);
  const Record third = Stored(4, 91900);
  EXPECT_EQ((*cache.Family(second.key))->size(), 2u);  // kept
  cache.Forget(third.key);
  EXPECT_EQ((*cache.Family(second.key))->size(), 3u);
}

// Random shapes (repeated ones too: ties), records with nothing that meets
// the constraints, unsupported records, another family: a cold prediction,
// read from the store's index of shapes, is PredictFrom's over the whole
// store, for keys near and far, stored or not.
TEST_F(FamilyCacheTest, AColdPredictionFromTheStoresIndexIsTheWholeFamilys) {
  std::mt19937 rng(13);
  std::uniform_int_distribution<int> pow2(0, 8), algo(0, 4), percent(0, 99);
  std::uniform_int_distribution<int64_t> size(1, 512);
  const auto dim = [&] {
    return percent(rng) < 50 ? int64_t{1} << pow2(rng) : size(rng);
  };
  std::vector<Record> records;
  for (int i = 0; i < 4000; ++i) {
    const int p = percent(rng);
    Record r = Shaped(dim(), dim(), dim(), dim(), algo(rng),
                      p < 30 ? int64_t{1} << 30 : int64_t{1} << 20);
    if (p < 5) r.key.problem.stride = {1, 1, 0};  // another family
    if (p >= 95) {
      for (AlgoResult& a : r.results) a.status = AlgoStatus::kFailed;
    }
    records.push_back(r);
  }
  ASSERT_TRUE(store_->PutAll(records).ok());
  const FamilyCache::Records all = All();
  // Nothing kept: every prediction reads the store.
  FamilyCache cache(store_.get(), absl::ZeroDuration(), 100000);
  Constraints small;
  small.max_workspace_bytes = int64_t{64} << 20;
  for (int q = 0; q < 150; ++q) {
    const ProblemKey key = q % 10 == 0 ? all[q]->key  // a stored shape
                                       : Shaped(dim() + 1, dim(), dim(),
                                                dim(), 0, 0).key;
    for (const Constraints& c : {Constraints(), small}) {
      for (int neighbours : {1, 3}) {
        const std::string at =
            key.ToText() + " neighbours " + std::to_string(neighbours);
        absl::StatusOr<std::optional<Prediction>> got =
            cache.Predict(key, c, neighbours);
        ASSERT_TRUE(got.ok()) << got.status();
        ExpectSame(PredictFrom(key, all, c, neighbours), *got, at);
      }
    }
  }
}

TEST_F(FamilyCacheTest, ANewFamilyPredictsNothing) {
  ASSERT_TRUE(store_->Put(Shaped(8, 64, 64, 28, 1, 0)).ok());
  FamilyCache cache(store_.get(), absl::Hours(1), 100);
  ProblemKey other = Shaped(8, 64, 64, 28, 1, 0).key;
  other.problem.stride = {2, 2, 0};
  absl::StatusOr<std::optional<Prediction>> got =
      cache.Predict(other, Constraints(), 3);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_FALSE(got->has_value());
}

// A family too sparse for the nearest search to stop before it read the
// whole family is kept, and read again once a record of it is stored.
TEST_F(FamilyCacheTest, AFamilyReadWholeIsKeptUntilARecordOfItIsStored) {
  FamilyCache cache(store_.get(), absl::Hours(1), 100);
  ASSERT_TRUE(store_->Put(Shaped(1, 64, 64, 28, 1, 0)).ok());
  ASSERT_TRUE(store_->Put(Shaped(2, 64, 64, 28, 1, 0)).ok());
  const ProblemKey key = Shaped(4, 64, 64, 28, 1, 0).key;
  const auto sources = [&] {
    absl::StatusOr<std::optional<Prediction>> p =
        cache.Predict(key, Constraints(), 3);
    EXPECT_TRUE(p.ok() && p->has_value());
    return p.ok() && p->has_value() ? (*p)->sources.size() : 0;
  };
  EXPECT_EQ(sources(), 2u);
  const Record third = Shaped(3, 64, 64, 28, 1, 0);
  ASSERT_TRUE(store_->Put(third).ok());
  EXPECT_EQ(sources(), 2u);  // kept
  cache.Forget(third.key);
  EXPECT_EQ(sources(), 3u);
}

}  // namespace
}  // namespace tunedb
