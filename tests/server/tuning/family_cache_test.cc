// FamilyCache over a real (in-memory) SQLite store: the families it keeps
// and the cuDNN versions it says the store may hold.
#include "server/tuning/family_cache.h"

#include <memory>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

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

  std::unique_ptr<Store> store_;
};

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

}  // namespace
}  // namespace tunedb
