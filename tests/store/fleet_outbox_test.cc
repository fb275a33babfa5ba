// The fleet outbox of the SQLite store (schema version 6): written in the
// record's own transaction, read oldest first, removed once published, and
// added to an older file by its migration.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "store/sql/database.h"
#include "store/sql/store_schema.h"
#include "store/store.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

using testing_util::TempDir;
using testing_util::TestRecord;

class FleetOutboxTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }
  void Open() {
    Store::Options options;
    options.path = path_;
    auto store = Store::Open(options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  TempDir dir_;
  const std::string path_ = dir_.File("store.db");
  std::unique_ptr<Store> store_;
};

TEST_F(FleetOutboxTest, PutForFleetStoresTheRecordAndItsOutboxEntry) {
  auto id = store_->PutForFleet(TestRecord(1));
  ASSERT_TRUE(id.ok()) << id.status();
  auto stored = store_->Get(TestRecord(1).key);
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ((*stored)->id, *id);
  EXPECT_EQ(*store_->OutboxSize(), 1);
  int64_t dropped = -1;
  auto entries = store_->ReadOutbox(10, &dropped);
  ASSERT_TRUE(entries.ok()) << entries.status();
  EXPECT_EQ(dropped, 0);
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].record.key, TestRecord(1).key);
  EXPECT_EQ((*entries)[0].record.results.size(), TestRecord(1).results.size());
  EXPECT_EQ((*entries)[0].record.host, TestRecord(1).host);
}

TEST_F(FleetOutboxTest, PutLeavesTheOutboxAlone) {
  ASSERT_TRUE(store_->Put(TestRecord(1)).ok());
  EXPECT_EQ(*store_->OutboxSize(), 0);
}

TEST_F(FleetOutboxTest, EntriesAreReadOldestFirstAndRemovedOncePublished) {
  for (int n = 1; n <= 5; ++n) ASSERT_TRUE(store_->PutForFleet(TestRecord(n)).ok());
  auto first = store_->ReadOutbox(3, nullptr);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 3u);
  EXPECT_EQ((*first)[0].record.key, TestRecord(1).key);
  EXPECT_EQ((*first)[2].record.key, TestRecord(3).key);
  std::vector<int64_t> ids;
  for (const OutboxEntry& e : *first) ids.push_back(e.id);
  ASSERT_TRUE(store_->RemoveFromOutbox(ids).ok());
  auto rest = store_->ReadOutbox(10, nullptr);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), 2u);
  EXPECT_EQ((*rest)[0].record.key, TestRecord(4).key);
}

TEST_F(FleetOutboxTest, TheOutboxSurvivesAReopen) {
  ASSERT_TRUE(store_->PutForFleet(TestRecord(1)).ok());
  store_.reset();
  Open();
  EXPECT_EQ(*store_->OutboxSize(), 1);
}

TEST_F(FleetOutboxTest, AnUnreadableEntryIsDroppedNotRepublishedForever) {
  ASSERT_TRUE(store_->PutForFleet(TestRecord(1)).ok());
  ASSERT_TRUE(store_->PutForFleet(TestRecord(2)).ok());
  store_.reset();
  {
    auto db = sql::Database::Open(path_, sql::Database::Mode::kReadWrite, 2000);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Execute("UPDATE fleet_outbox SET record_json = '{' "
                               "WHERE id = 1").ok());
  }
  Open();
  int64_t dropped = 0;
  auto entries = store_->ReadOutbox(10, &dropped);
  ASSERT_TRUE(entries.ok());
  EXPECT_EQ(dropped, 1);
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].record.key, TestRecord(2).key);
  EXPECT_EQ(*store_->OutboxSize(), 1);
}

TEST_F(FleetOutboxTest, AVersion5FileGainsTheOutboxAndKeepsItsRecords) {
  ASSERT_TRUE(store_->Put(TestRecord(1)).ok());
  store_.reset();
  {
    auto db = sql::Database::Open(path_, sql::Database::Mode::kReadWrite, 2000);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Execute("DROP TABLE fleet_outbox; "
                               "ALTER TABLE results DROP COLUMN build_ms;"
                               "ALTER TABLE results DROP COLUMN heuristic_rank;"
                               "PRAGMA user_version = 5;").ok());
  }
  Open();
  EXPECT_EQ(*store_->Count(), 1);
  EXPECT_EQ(*store_->OutboxSize(), 0);
  ASSERT_TRUE(store_->PutForFleet(TestRecord(2)).ok());
  EXPECT_EQ(*store_->OutboxSize(), 1);
  auto db = sql::Database::Open(path_, sql::Database::Mode::kReadOnly, 2000);
  ASSERT_TRUE(db.ok());
  EXPECT_EQ((*db)->QueryInt64("PRAGMA user_version").value_or(-1),
            kStoreSchemaVersion);
}

}  // namespace
}  // namespace tunedb
