// The answers served by day and program (schema 13, served_days,
// store/served_days_sql.h): the served counts' flush (Store::AddServed)
// adds to each record's total and to its day's row of the program in one
// transaction, drops the rows over 400 days old, and leaves an unknown id
// out; a version 12 file is migrated with the table, empty.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/served_days_sql.h"
#include "store/sql/database.h"
#include "store/sql/store_schema.h"
#include "store/store.h"
#include "tests/store/store_test_util.h"

namespace tunedb::store_test {
namespace {

int64_t Today() { return UtcDayOfMicros(absl::ToUnixMicros(absl::Now())); }

class ServedDaysTest : public FileStoreTest {
 protected:
  ServedDaysTest() : FileStoreTest("served.db") {}

  void SetUp() override {
    FileStoreTest::SetUp();
    Record a = TestRecord(1);
    a.search_ms = 100;
    Record b = TestRecord(2);
    b.search_ms = 7.5;
    a_ = MustPut(*store_, a);
    b_ = MustPut(*store_, b);
  }

  int64_t Int(const std::string& sql) {
    auto db = sql::Database::Open(path_, sql::Database::Mode::kReadOnly, 5000);
    if (!db.ok()) return -1;
    return (*db)->QueryInt64(sql).value_or(-1);
  }

  int64_t ServedCount(int64_t n) {
    absl::StatusOr<std::optional<Record>> r = store_->Get(TestRecord(n).key);
    return r.ok() && r->has_value() ? (*r)->served_count : -1;
  }

  std::vector<ServedDayProgram> Days() {
    absl::StatusOr<std::vector<ServedDayProgram>> rows =
        store_->ServedDays(std::numeric_limits<int64_t>::min());
    EXPECT_TRUE(rows.ok()) << rows.status();
    return rows.value_or(std::vector<ServedDayProgram>{});
  }

  int64_t a_ = 0, b_ = 0;
};

TEST_F(ServedDaysTest, AFlushAddsTheTotalsAndTheDaysAnswersByProgram) {
  const int64_t before = Today();
  ASSERT_TRUE(store_
                  ->AddServed({{a_, 2, "train"},
                               {a_, 1, ""},
                               {b_, 4, "train"}})
                  .ok());
  ASSERT_TRUE(store_->AddServed({{b_, 1, "train"}}).ok());
  const int64_t after = Today();
  EXPECT_EQ(ServedCount(1), 3);
  EXPECT_EQ(ServedCount(2), 5);
  const std::vector<ServedDayProgram> rows = Days();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_GE(rows[0].day, before);
  EXPECT_LE(rows[0].day, after);
  EXPECT_EQ(rows[0].program, "");
  EXPECT_EQ(rows[0].served, 1);
  EXPECT_EQ(rows[0].saved_ms, 100);
  EXPECT_EQ(rows[1].program, "train");
  EXPECT_EQ(rows[1].served, 7);
  EXPECT_EQ(rows[1].saved_ms, 2 * 100 + 5 * 7.5);
}

TEST_F(ServedDaysTest, TheDaysRowsAreKeptPerDeviceAndSummedWhenRead) {
  Record other = TestRecord(3, "NVIDIA A100");
  other.search_ms = 1;
  const int64_t c = MustPut(*store_, other);
  ASSERT_TRUE(store_->AddServed({{a_, 1, "train"}, {c, 1, "train"}}).ok());
  EXPECT_EQ(Int("SELECT COUNT(*) FROM served_days"), 2);
  const std::vector<ServedDayProgram> rows = Days();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].served, 2);
  EXPECT_EQ(rows[0].saved_ms, 101);
}

TEST_F(ServedDaysTest, AFlushThatCannotWriteTheDaysAddsNoTotalEither) {
  Execute("DROP TABLE served_days");
  EXPECT_FALSE(store_->AddServed({{a_, 2, "train"}}).ok());
  EXPECT_EQ(ServedCount(1), 0);
}

TEST_F(ServedDaysTest, AnUnknownIdIsLeftOutOfTheDays) {
  ASSERT_TRUE(store_->AddServed({{b_ + 1000, 9, "train"}}).ok());
  EXPECT_TRUE(Days().empty());
}

TEST_F(ServedDaysTest, AFlushDropsTheDaysOver400DaysOld) {
  const int64_t today = Today();
  Execute(absl::StrCat(
      "INSERT INTO served_days VALUES(", today - kServedDaysKept - 2,
      ", 'g', 1, 'old', 1, 1), (", today - kServedDaysKept + 1,
      ", 'g', 1, 'kept', 1, 1)"));
  ASSERT_TRUE(store_->AddServed({{a_, 1, ""}}).ok());
  const std::vector<ServedDayProgram> rows = Days();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].program, "kept");
  EXPECT_EQ(rows[1].program, "");
}

TEST_F(ServedDaysTest, AVersion12FileIsMigratedWithTheTableEmpty) {
  ASSERT_TRUE(store_->AddServed({{a_, 3, ""}}).ok());
  store_.reset();
  Execute("DROP TABLE served_days; PRAGMA user_version = 12;");
  Reopen();
  EXPECT_EQ(Int("PRAGMA user_version"), kStoreSchemaVersion);
  EXPECT_EQ(kStoreSchemaVersion, 13);
  EXPECT_EQ(Int("SELECT COUNT(*) FROM served_days"), 0);
  EXPECT_EQ(ServedCount(1), 3);  // the totals stay
  ASSERT_TRUE(store_->AddServed({{a_, 1, "train"}}).ok());
  ASSERT_EQ(Days().size(), 1u);
  EXPECT_EQ(Days()[0].program, "train");
}

TEST(UtcDayTest, ADayIsTheUtcDateSinceTheEpoch) {
  EXPECT_EQ(UtcDayOfMicros(0), 0);
  EXPECT_EQ(UtcDayOfMicros(86400LL * 1000000 - 1), 0);
  EXPECT_EQ(UtcDayOfMicros(86400LL * 1000000), 1);
  EXPECT_EQ(UtcDayOfMicros(-1), -1);
}

}  // namespace
}  // namespace tunedb::store_test
