// The index of stored shapes (schema 12, store/sql/record_shapes.h): every
// way a record is written or removed (Put, a replacement, Delete, an
// import's commit, a quarantine) keeps exactly one row per record in the
// same transaction; a version 11 file is migrated with a row for each
// record; and FamilyNear answers from it (a box query of the R*Tree, then
// rows by id) exactly the family's records within the radius.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/shape_family.h"
#include "common/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/shape_scan.h"
#include "store/sql/database.h"
#include "store/sql/statement.h"
#include "store/sql/store_schema.h"
#include "store/store.h"
#include "tests/store/store_test_util.h"

namespace tunedb::store_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// TestRecord(1) with another shape.
Record Shaped(int64_t n, int64_t c, int64_t k, int64_t hw) {
  Record r = TestRecord(1);
  r.key.problem.n = n;
  r.key.problem.c = c;
  r.key.problem.k = k;
  r.key.problem.input = {hw, hw, 0};
  return r;
}

class RecordShapesTest : public FileStoreTest {
 protected:
  RecordShapesTest() : FileStoreTest("shapes.db") {}

  int64_t Int(const std::string& sql) {
    auto db = sql::Database::Open(path_, sql::Database::Mode::kReadOnly, 5000);
    if (!db.ok()) return -1;
    return (*db)->QueryInt64(sql).value_or(-1);
  }

  // The index holds one row per record, of the record's cell: "" if so,
  // else what differs.
  std::string Mismatch() {
    const int64_t records = Int("SELECT COUNT(*) FROM records");
    const int64_t rows = Int("SELECT COUNT(*) FROM record_shapes");
    const int64_t matched =
        Int("SELECT COUNT(*) FROM records r JOIN record_shapes s ON s.id = "
            "r.id");
    if (records != rows || rows != matched) {
      return absl::StrCat(records, " records, ", rows, " index rows, ", matched,
                          " of them a record's");
    }
    // Each row is where FamilyNear finds its record: at radius 0.
    std::string wrong;
    absl::Status status = store_->Query({}, 0, 0, [&](const Record& r) {
      absl::StatusOr<std::vector<Record>> near =
          store_->FamilyNear(r.key, 0, 0, nullptr);
      bool found = false;
      for (const Record& n : near.value_or(std::vector<Record>())) {
        found = found || n.id == r.id;
      }
      if (!found) absl::StrAppend(&wrong, "record ", r.id, " not found; ");
      return true;
    });
    if (!status.ok()) return status.ToString();
    return wrong;
  }

  std::vector<int64_t> NearIds(const ProblemKey& key, double radius,
                               int limit = 0, bool* more = nullptr) {
    absl::StatusOr<std::vector<Record>> near =
        store_->FamilyNear(key, radius, limit, more);
    EXPECT_TRUE(near.ok()) << near.status();
    std::vector<int64_t> ids;
    for (const Record& r : near.value_or(std::vector<Record>())) {
      ids.push_back(r.id);
    }
    return ids;
  }

};

TEST_F(RecordShapesTest, APutWritesOneRowAndAReplacementKeepsIt) {
  const int64_t a = MustPut(*store_, Shaped(8, 64, 64, 28));
  const int64_t b = MustPut(*store_, Shaped(16, 64, 64, 28));
  Record again = Shaped(8, 64, 64, 28);
  again.host = "another-host";
  EXPECT_EQ(MustPut(*store_, again), a);
  EXPECT_EQ(store_->PutForFleet(Shaped(16, 64, 64, 28)).value_or(0), b);
  EXPECT_EQ(Mismatch(), "");
  EXPECT_EQ(Int("SELECT COUNT(*) FROM record_shapes"), 2);
}

TEST_F(RecordShapesTest, ADeleteRemovesItsRecordsRowsInItsTransaction) {
  for (int64_t n = 1; n <= 6; ++n) MustPut(*store_, Shaped(n, 64, 64, 28));
  EXPECT_EQ(store_->Delete({{{"n", "2"}}}).value_or(-1), 1);
  EXPECT_EQ(Mismatch(), "");
  EXPECT_EQ(Int("SELECT COUNT(*) FROM record_shapes"), 5);
  EXPECT_EQ(store_->Delete({}).value_or(-1), 5);
  EXPECT_EQ(Int("SELECT COUNT(*) FROM record_shapes"), 0);
}

TEST_F(RecordShapesTest, AnImportCommitWritesARowForEveryRecordItStores) {
  const int64_t old = MustPut(*store_, Shaped(1, 64, 64, 28));
  absl::StatusOr<std::unique_ptr<Store::StagedImport>> import =
      store_->BeginImport();
  ASSERT_TRUE(import.ok()) << import.status();
  for (int64_t n = 1; n <= 2500; ++n) {  // several staging batches
    ASSERT_TRUE((*import)->Add(Shaped(n, 64, 32, 14)).ok());
  }
  ASSERT_TRUE((*import)->Add(Shaped(1, 64, 64, 28)).ok());  // replaces old
  ASSERT_TRUE((*import)->Add(Shaped(7, 64, 32, 14)).ok());  // staged twice
  ASSERT_TRUE((*import)->Commit().ok());
  EXPECT_EQ(store_->Count().value_or(0), 2501);
  EXPECT_EQ(Mismatch(), "");
  EXPECT_THAT(NearIds(Shaped(1, 64, 64, 28).key, 0), ElementsAre(old));
}

TEST_F(RecordShapesTest, ADiscardedImportWritesNoRow) {
  MustPut(*store_, Shaped(1, 64, 64, 28));
  {
    absl::StatusOr<std::unique_ptr<Store::StagedImport>> import =
        store_->BeginImport();
    ASSERT_TRUE(import.ok()) << import.status();
    ASSERT_TRUE((*import)->Add(Shaped(2, 64, 64, 28)).ok());
  }
  EXPECT_EQ(Int("SELECT COUNT(*) FROM record_shapes"), 1);
  EXPECT_EQ(Mismatch(), "");
}

TEST_F(RecordShapesTest, AQuarantinedRowLeavesTheIndex) {
  for (int64_t n = 1; n <= 4; ++n) MustPut(*store_, Shaped(n, 64, 64, 28));
  Execute("UPDATE records SET repeats = 'many' WHERE id = 3");
  absl::StatusOr<std::vector<BadRow>> moved = store_->QuarantineBadRows();
  ASSERT_TRUE(moved.ok()) << moved.status();
  ASSERT_EQ(moved->size(), 1u);
  EXPECT_EQ(Int("SELECT COUNT(*) FROM record_shapes WHERE id = 3"), 0);
  EXPECT_EQ(Mismatch(), "");
}

TEST_F(RecordShapesTest, FamilyNearLeavesOutRowsThatCannotBeRead) {
  for (int64_t n = 1; n <= 4; ++n) MustPut(*store_, Shaped(n, 64, 64, 28));
  Execute("UPDATE results SET gpu_median_ms = -1 WHERE record_id = 2");
  EXPECT_THAT(NearIds(Shaped(1, 64, 64, 28).key, kMaxShapeDistance),
              ElementsAre(1, 3, 4));
}

// Random shapes of two families (and a third sharing nothing): FamilyNear
// answers exactly the records a whole read finds within the radius, or the
// nearest `limit` of them (by distance, then id).
TEST_F(RecordShapesTest, FamilyNearIsTheFamilysRecordsWithinTheRadius) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int64_t> n(1, 64), ck(3, 512), hw(7, 224);
  std::uniform_int_distribution<int> percent(0, 99);
  std::vector<Record> batch;
  for (int i = 0; i < 3000; ++i) {
    Record r = Shaped(n(rng), ck(rng), ck(rng), hw(rng));
    if (percent(rng) < 20) r.key.problem.stride = {1, 1, 0};  // family 2
    if (percent(rng) < 10) r.key.problem.input[1] += 3;       // not square
    batch.push_back(r);
  }
  ASSERT_TRUE(store_->PutAll(batch).ok());
  std::vector<Record> all;
  ASSERT_TRUE(store_
                  ->Query({}, 0, 0,
                          [&](const Record& r) {
                            all.push_back(r);
                            return true;
                          })
                  .ok());
  for (int q = 0; q < 60; ++q) {
    Record query = Shaped(n(rng), ck(rng), ck(rng), hw(rng));
    if (q % 3 == 0) query.key.problem.stride = {1, 1, 0};
    for (double radius : {0.0, 0.3, 1.0, 2.5}) {
      // (distance, id) of every record within the radius, nearest first.
      std::vector<std::pair<double, int64_t>> within;
      for (const Record& r : all) {
        const double d = ShapeDistance(query.key.problem, r.key.problem);
        if (SameFamily(query.key, r.key) && d <= radius) {
          within.push_back({d, r.id});
        }
      }
      std::sort(within.begin(), within.end());
      for (int limit : {0, 1, 5, 40}) {
        const size_t kept =
            limit == 0 ? within.size() : std::min<size_t>(limit, within.size());
        std::vector<int64_t> want;
        for (size_t i = 0; i < kept; ++i) want.push_back(within[i].second);
        std::sort(want.begin(), want.end());
        bool more = false;
        EXPECT_EQ(NearIds(query.key, radius, limit, &more), want)
            << query.key.ToText() << " radius " << radius << " limit " << limit;
        // Said where some were left out (and perhaps where none were).
        if (kept < within.size()) {
          EXPECT_TRUE(more);
        }
        if (limit == 0) {
          EXPECT_FALSE(more);
        }
      }
    }
  }
  Record other = Shaped(8, 64, 64, 28);
  other.key.problem.filter = {5, 5, 0};  // a family nothing is stored of
  other.key.problem.padding = {2, 2, 0};
  EXPECT_THAT(NearIds(other.key, kMaxShapeDistance), IsEmpty());
}

// SQLite's plan of the box query: the R*Tree's own search, given the family
// (A0: equal, column 0) and both bounds (D: >=, B: <=) of each of the four
// dims (columns 2, 4, 6, 8), and no table scanned.
TEST_F(RecordShapesTest, FamilyNearIsOneBoxQueryOfTheRTree) {
  auto db = sql::Database::Open(path_, sql::Database::Mode::kReadOnly, 5000);
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<sql::Statement> plan =
      (*db)->GetUniqueStatement("EXPLAIN QUERY PLAN " + FamilyNearSql());
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::vector<std::string> steps;
  while (plan->Step().value_or(false)) steps.push_back(plan->ColumnText(3));
  const std::string text = absl::StrJoin(steps, "; ");
  EXPECT_THAT(
      text, ::testing::ContainsRegex("SCAN record_shapes VIRTUAL TABLE INDEX 2:"
                                     "A0([BD][2468]){8};"))
      << text;
  EXPECT_THAT(text, Not(HasSubstr("SCAN records"))) << text;
}

TEST_F(RecordShapesTest, AVersion11FileIsMigratedWithARowForEachRecord) {
  for (int64_t n = 1; n <= 300; ++n) {
    MustPut(*store_, Shaped(n, 32 + n, 64, 28));
  }
  store_.reset();
  Execute(
      "DROP TRIGGER record_shapes_delete; DROP TABLE record_shapes;"
      " PRAGMA user_version = 11;");
  Reopen();
  EXPECT_EQ(Int("PRAGMA user_version"), kStoreSchemaVersion);
  EXPECT_EQ(Mismatch(), "");
  EXPECT_THAT(NearIds(Shaped(2, 34, 64, 28).key, 0), ElementsAre(2));
  // The trigger came with it.
  EXPECT_EQ(store_->Delete({{{"n", "2"}}}).value_or(-1), 1);
  EXPECT_EQ(Mismatch(), "");
}

}  // namespace
}  // namespace tunedb::store_test
