// Staged imports (Store::StagedImport): nothing is visible before Commit,
// an import that is dropped leaves the store as it was, a commit stores
// every record as Put would (replacing in place), and leaves the WAL
// truncated; the WAL is also kept below its size limit after other writes.
#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/store.h"
#include "tests/store/store_test_util.h"

namespace tunedb::store_test {
namespace {

int64_t FileSize(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : -1;
}

class StagedImportTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    options_.path = GetParam() ? ":memory:" : dir_.File("store.db");
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(options_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  std::unique_ptr<Store::StagedImport> MustBegin() {
    absl::StatusOr<std::unique_ptr<Store::StagedImport>> import =
        store_->BeginImport();
    EXPECT_TRUE(import.ok()) << import.status();
    return import.ok() ? *std::move(import) : nullptr;
  }

  int64_t Count() { return store_->Count().value_or(-1); }

  TempDir dir_;
  Store::Options options_;
  std::unique_ptr<Store> store_;
};

TEST_P(StagedImportTest, StagedRecordsAreInvisibleUntilCommit) {
  auto import = MustBegin();
  ASSERT_NE(import, nullptr);
  // More than one staging batch.
  for (int n = 1; n <= 2500; ++n) ASSERT_TRUE(import->Add(TestRecord(n)).ok());
  EXPECT_EQ(import->added(), 2500);
  EXPECT_EQ(Count(), 0);
  EXPECT_FALSE(store_->Get(StemKey(1))->has_value());

  absl::StatusOr<int64_t> stored = import->Commit();
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(*stored, 2500);
  EXPECT_EQ(Count(), 2500);
  ExpectSameRecord(store_->Get(StemKey(1234))->value(), TestRecord(1234));
}

TEST_P(StagedImportTest, AnImportDroppedBeforeCommitStoresNothing) {
  ASSERT_TRUE(store_->Put(TestRecord(1)).ok());
  {
    auto import = MustBegin();
    ASSERT_NE(import, nullptr);
    for (int n = 1; n <= 1500; ++n) {
      ASSERT_TRUE(import->Add(TestRecord(n, "Other GPU")).ok());
    }
  }
  EXPECT_EQ(Count(), 1);
  // The store takes new imports afterwards: the staging area was released.
  for (int i = 0; i < 6; ++i) {
    auto import = MustBegin();
    ASSERT_NE(import, nullptr);
  }
}

TEST_P(StagedImportTest, CommitReplacesExistingRecordsInPlaceAsPutDoes) {
  absl::StatusOr<int64_t> id = store_->Put(TestRecord(5));
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(store_->AddServed({{*id, 3}}).ok());
  Record newer = NegativeRecord(5);
  newer.host = "node-9";
  auto import = MustBegin();
  ASSERT_NE(import, nullptr);
  ASSERT_TRUE(import->Add(TestRecord(6)).ok());
  ASSERT_TRUE(import->Add(TestRecord(5)).ok());
  // A later line of the same key wins.
  ASSERT_TRUE(import->Add(newer).ok());
  ASSERT_TRUE(import->Commit().ok());

  EXPECT_EQ(Count(), 2);
  std::optional<Record> got = store_->Get(StemKey(5)).value();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->id, *id);
  EXPECT_EQ(got->served_count, 3);
  ExpectSameRecord(*got, newer);
}

TEST_P(StagedImportTest, AnInvalidRecordIsRefusedAndTheImportStoresNothing) {
  auto import = MustBegin();
  ASSERT_NE(import, nullptr);
  ASSERT_TRUE(import->Add(TestRecord(1)).ok());
  Record bad = TestRecord(2);
  bad.key.problem.n = 0;
  EXPECT_EQ(import->Add(bad).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(import->Commit().ok());
  EXPECT_EQ(Count(), 0);
}

TEST_P(StagedImportTest, ImportsMayRunSideBySide) {
  auto first = MustBegin();
  auto second = MustBegin();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  ASSERT_TRUE(first->Add(TestRecord(1)).ok());
  ASSERT_TRUE(second->Add(TestRecord(2)).ok());
  ASSERT_TRUE(second->Commit().ok());
  EXPECT_EQ(Count(), 1);
  ASSERT_TRUE(first->Commit().ok());
  EXPECT_EQ(Count(), 2);
}

INSTANTIATE_TEST_SUITE_P(MemoryAndFile, StagedImportTest,
                         ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Memory" : "File";
                         });

TEST(StoreWalTest, AnImportCommitLeavesTheWalTruncated) {
  TempDir dir;
  Store::Options options;
  options.path = dir.File("store.db");
  auto store = Store::Open(options);
  ASSERT_TRUE(store.ok()) << store.status();
  auto import = (*store)->BeginImport();
  ASSERT_TRUE(import.ok()) << import.status();
  for (int n = 1; n <= 3000; ++n) {
    ASSERT_TRUE((*import)->Add(TestRecord(n)).ok());
  }
  ASSERT_TRUE((*import)->Commit().ok());
  EXPECT_EQ(FileSize(options.path + "-wal"), 0);
  // The size a Stats reports is then the database's own.
  EXPECT_EQ((*store)->SizeBytes(), FileSize(options.path));
  EXPECT_EQ((*store)->Count().value_or(-1), 3000);
}

TEST(StoreWalTest, TheWalIsTruncatedWhenAWriteLeavesItOverItsLimit) {
  TempDir dir;
  Store::Options options;
  options.path = dir.File("store.db");
  options.checkpoint_wal_bytes = 256 << 10;
  options.checkpoint_every_writes = 0;
  auto store = Store::Open(options);
  ASSERT_TRUE(store.ok()) << store.status();
  int64_t largest = 0;
  for (int n = 1; n <= 400; ++n) {
    ASSERT_TRUE((*store)->Put(TestRecord(n)).ok());
    largest = std::max(largest, FileSize(options.path + "-wal"));
  }
  // One write adds a few pages past the limit at most, then the WAL is cut
  // back; without the limit 400 writes leave well over a megabyte.
  EXPECT_LE(largest, options.checkpoint_wal_bytes + (64 << 10));

  Store::Options unlimited = options;
  unlimited.path = dir.File("unlimited.db");
  unlimited.checkpoint_wal_bytes = 0;
  auto other = Store::Open(unlimited);
  ASSERT_TRUE(other.ok()) << other.status();
  for (int n = 1; n <= 400; ++n) {
    ASSERT_TRUE((*other)->Put(TestRecord(n)).ok());
  }
  EXPECT_GT(FileSize(unlimited.path + "-wal"), 2 * largest);
}

}  // namespace
}  // namespace tunedb::store_test
