// Rows that cannot be read back: a byte flipped in a stored value (the file
// still passes quick_check) or a value of the wrong type, range or name.
// Get fails naming the row; Query fails the same way or reports the row in
// its place and goes on; Delete leaves it alone; QuarantineBadRows moves it,
// values untouched, and what is left reads back.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/sql/database.h"
#include "store/sql/statement.h"
#include "store/sql/store_schema.h"
#include "store/store.h"
#include "tests/store/store_test_util.h"
#include "tests/testing/file_bytes.h"

namespace tunedb::store_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class BadRowsTest : public FileStoreTest {
 protected:
  BadRowsTest() : FileStoreTest("bad.db") {}

  void SetUp() override {
    FileStoreTest::SetUp();
    for (int64_t n = 1; n <= 5; ++n) {
      absl::StatusOr<int64_t> id = store_->Put(TestRecord(n));
      ASSERT_TRUE(id.ok()) << id.status();
      ids_.push_back(*id);
    }
  }

  // Damages a stored row through a second connection.
  void Damage(const std::string& sql) { Execute(sql); }

  // Every row Query reports, as "id" for a record and "id: reason" for a
  // bad row.
  std::vector<std::string> Rows(const RecordFilter& filter = {},
                                int limit = 0) {
    std::vector<std::string> rows;
    absl::Status status = store_->Query(
        filter, 0, limit,
        [&](const Record& r) {
          rows.push_back(absl::StrCat(r.id));
          return true;
        },
        [&](const BadRow& bad) {
          rows.push_back(absl::StrCat(bad.id, ": ", bad.reason));
          return true;
        });
    EXPECT_TRUE(status.ok()) << status;
    return rows;
  }

  std::vector<int64_t> ids_;
};

TEST_F(BadRowsTest, AFlippedByteInAKeyPassesQuickCheckAndIsABadRow) {
  const std::string key = StemKey(3).ToText();
  store_.reset();  // closing checkpoints the WAL into the file
  // The key text in the records table is followed by the GPU model; in the
  // unique index, by the row id. " n=3" becomes " n=2".
  const size_t digit = key.find(" n=3 ") + 3;
  ASSERT_TRUE(testing_util::FlipByte(path_, key + "Simulated GPU", digit));
  Reopen();
  ASSERT_TRUE(store_->QuickCheck().ok());
  EXPECT_THAT(Rows(),
              ElementsAre("1", "2",
                          "3: key_hash does not match key_text (one of them "
                          "is damaged)",
                          "4", "5"));
}

TEST_F(BadRowsTest, EachKindOfDamageIsNamedByItsColumn) {
  Damage(
      "UPDATE results SET math_type = 'tensor_oq' WHERE record_id = 1"
      " AND rank = 1");
  Damage("UPDATE records SET host = CAST(x'ff7a' AS TEXT) WHERE id = 2");
  Damage("UPDATE records SET repeats = 'many' WHERE id = 3");
  Damage("UPDATE records SET key_text = 'kv=1 gpu=x' WHERE id = 4");
  EXPECT_THAT(Rows(),
              ElementsAre("1: results[1].math_type \"tensor_oq\" is unknown",
                          "2: host \"\\xffz\" is not valid UTF-8",
                          "3: repeats is not an integer",
                          HasSubstr("4: key_text does not parse: "), "5"));
}

TEST_F(BadRowsTest, GetAndAStrictQueryFailNamingTheRow) {
  Damage("UPDATE results SET gpu_median_ms = -1 WHERE record_id = 2");
  absl::StatusOr<std::optional<Record>> got = store_->Get(StemKey(2));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(got.status().message(),
              HasSubstr("record 2 cannot be read: results[0].gpu_median_ms "
                        "is -1"));
  int visited = 0;
  absl::Status strict = store_->Query({}, 0, 0, [&](const Record&) {
    ++visited;
    return true;
  });
  EXPECT_EQ(strict.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(strict.message(), HasSubstr("record 2 cannot be read"));
  EXPECT_EQ(visited, 1);
}

TEST_F(BadRowsTest, BadRowsCountTowardsTheLimitAndFiltersStillApply) {
  Damage("UPDATE results SET status = 'maybe' WHERE record_id = 2");
  EXPECT_THAT(Rows({}, 2),
              ElementsAre("1", "2: results[0].status \"maybe\" is unknown"));
  // The key reads back, so a filter that rejects it skips the row.
  RecordFilter n1;
  n1.fields["n"] = "1";
  EXPECT_THAT(Rows(n1), ElementsAre("1"));
}

TEST_F(BadRowsTest, PutOfTheSameKeyReplacesADamagedRow) {
  Damage("UPDATE results SET status = 'maybe' WHERE record_id = 2");
  ASSERT_TRUE(store_->Put(TestRecord(2)).ok());
  absl::StatusOr<std::optional<Record>> got = store_->Get(StemKey(2));
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got->has_value());
  ExpectSameRecord(**got, TestRecord(2));
}

TEST_F(BadRowsTest, DeleteByFilterLeavesBadRowsAlone) {
  Damage("UPDATE records SET key_text = 'garbage' WHERE id = 3");
  RecordFilter fwd;
  fwd.fields["op"] = "fwd";
  absl::StatusOr<int64_t> deleted = store_->Delete(fwd);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 4);
  EXPECT_THAT(Rows(), ElementsAre(HasSubstr("3: key_text does not parse")));
}

TEST_F(BadRowsTest, QuarantineMovesBadRowsWithTheirValuesAndLeavesACleanStore) {
  Damage("UPDATE records SET host = CAST(x'ff7a' AS TEXT) WHERE id = 2");
  Damage("UPDATE results SET math_type = 'tensor_oq' WHERE record_id = 4");
  absl::StatusOr<std::vector<BadRow>> moved = store_->QuarantineBadRows();
  ASSERT_TRUE(moved.ok()) << moved.status();
  ASSERT_EQ(moved->size(), 2u);
  EXPECT_EQ((*moved)[0].id, 2);
  EXPECT_EQ((*moved)[1].id, 4);
  EXPECT_THAT(Rows(), ElementsAre("1", "3", "5"));
  EXPECT_EQ(store_->Count().value_or(-1), 3);

  auto db = sql::Database::Open(path_, sql::Database::Mode::kReadOnly, 5000);
  ASSERT_TRUE(db.ok()) << db.status();
  auto kept = (*db)->GetUniqueStatement(
      "SELECT id, hex(host), reason FROM quarantined_records ORDER BY id");
  ASSERT_TRUE(kept.ok()) << kept.status();
  ASSERT_TRUE(kept->Step().value_or(false));
  EXPECT_EQ(kept->ColumnInt64(0), 2);
  EXPECT_EQ(kept->ColumnText(1), "FF7A");  // the stored bytes, untouched
  EXPECT_THAT(kept->ColumnText(2), HasSubstr("host"));
  auto results = (*db)->GetUniqueStatement(
      "SELECT COUNT(*), SUM(math_type = 'tensor_oq') FROM quarantined_results"
      " WHERE record_id = 4");
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_TRUE(results->Step().value_or(false));
  EXPECT_EQ(results->ColumnInt64(0),
            static_cast<int64_t>(TestRecord(4).results.size()));
  EXPECT_GE(results->ColumnInt64(1), 1);

  absl::StatusOr<std::vector<BadRow>> again = store_->QuarantineBadRows();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->empty());
}

TEST_F(BadRowsTest, QuarantineKeepsTheProvenanceThatMadeARowBad) {
  // TestRecord's driver is 580.65.06 and its cuDNN 9.19.0: neither a newer
  // driver nor its own version can be where a record was re-timed from.
  Damage("UPDATE records SET revalidated_from_driver = '590.1' WHERE id = 2");
  Damage("UPDATE records SET revalidated_from = 91900 WHERE id = 3");
  absl::StatusOr<std::vector<BadRow>> moved = store_->QuarantineBadRows();
  ASSERT_TRUE(moved.ok()) << moved.status();
  ASSERT_EQ(moved->size(), 2u);
  EXPECT_THAT((*moved)[0].reason, HasSubstr("revalidated_from_driver"));
  EXPECT_THAT((*moved)[1].reason, HasSubstr("revalidated_from"));

  auto db = sql::Database::Open(path_, sql::Database::Mode::kReadOnly, 5000);
  ASSERT_TRUE(db.ok()) << db.status();
  auto kept = (*db)->GetUniqueStatement(
      "SELECT id, revalidated_from, revalidated_from_driver"
      " FROM quarantined_records ORDER BY id");
  ASSERT_TRUE(kept.ok()) << kept.status();
  ASSERT_TRUE(kept->Step().value_or(false));
  EXPECT_EQ(kept->ColumnInt64(0), 2);
  EXPECT_EQ(kept->ColumnInt64(1), 0);
  EXPECT_EQ(kept->ColumnText(2), "590.1");  // the value that made it bad
  ASSERT_TRUE(kept->Step().value_or(false));
  EXPECT_EQ(kept->ColumnInt64(0), 3);
  EXPECT_EQ(kept->ColumnInt64(1), 91900);
  EXPECT_EQ(kept->ColumnText(2), "");
}

// `tunedb repair` lists what it quarantined by id: no later record may take
// one of those ids, or `show ID` would name another record.
TEST_F(BadRowsTest, TheIdsOfQuarantinedRecordsAreNeverHandedOutAgain) {
  Damage("UPDATE records SET repeats = 'many' WHERE id = 4");
  Damage("UPDATE records SET repeats = 'many' WHERE id = 5");
  ASSERT_TRUE(store_->QuarantineBadRows().ok());
  absl::StatusOr<int64_t> put = store_->Put(TestRecord(6));
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_EQ(*put, 6);
  ASSERT_TRUE(store_->PutAll({TestRecord(7), TestRecord(8)}).ok());
  EXPECT_THAT(Rows(), ElementsAre("1", "2", "3", "6", "7", "8"));
}

TEST_F(BadRowsTest, TheIdsOfDeletedRecordsAreNeverHandedOutAgain) {
  RecordFilter last;
  last.fields["n"] = "5";
  ASSERT_EQ(store_->Delete(last).value_or(-1), 1);
  absl::StatusOr<int64_t> put = store_->Put(TestRecord(6));
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_EQ(*put, 6);
}

// A version 6 file (record ids without AUTOINCREMENT) whose highest ids were
// quarantined: the migration keeps every id and hands none of those out.
TEST_F(BadRowsTest, AVersion6FileKeepsItsIdsAndRetiresItsQuarantinedOnes) {
  Damage("UPDATE records SET repeats = 'many' WHERE id = 5");
  ASSERT_TRUE(store_->QuarantineBadRows().ok());
  store_.reset();
  Damage(R"sql(
CREATE TABLE records_v6 AS SELECT * FROM records;
ALTER TABLE records_v6 DROP COLUMN revalidated_from;
ALTER TABLE records_v6 DROP COLUMN revalidated_from_driver;
DROP TABLE records;
DROP TABLE import_receipts;
DELETE FROM sqlite_sequence;
CREATE TABLE records(
  id INTEGER PRIMARY KEY, key_version INTEGER NOT NULL,
  key_hash INTEGER NOT NULL, key_text TEXT NOT NULL UNIQUE,
  gpu_model TEXT NOT NULL, cudnn_version INTEGER NOT NULL, op TEXT NOT NULL,
  in_type TEXT NOT NULL DEFAULT '', layout TEXT NOT NULL DEFAULT '',
  measured_at_us INTEGER NOT NULL, host TEXT NOT NULL,
  gpu_uuid TEXT NOT NULL, driver_version TEXT NOT NULL, finder TEXT NOT NULL,
  repeats INTEGER NOT NULL, workspace_cap_bytes INTEGER NOT NULL,
  search_ms REAL NOT NULL, verified INTEGER NOT NULL,
  served_count INTEGER NOT NULL DEFAULT 0,
  last_served_us INTEGER NOT NULL DEFAULT 0,
  timing_version INTEGER NOT NULL DEFAULT 1);
INSERT INTO records SELECT * FROM records_v6;
DROP TABLE records_v6;
ALTER TABLE results DROP COLUMN build_ms;
ALTER TABLE results DROP COLUMN heuristic_rank;
PRAGMA user_version = 6;
)sql");
  Reopen();
  EXPECT_THAT(Rows(), ElementsAre("1", "2", "3", "4"));
  absl::StatusOr<int64_t> put = store_->Put(TestRecord(6));
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_EQ(*put, 6);
  auto db = sql::Database::Open(path_, sql::Database::Mode::kReadOnly, 5000);
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_EQ((*db)->QueryInt64("PRAGMA user_version").value_or(-1),
            kStoreSchemaVersion);
  int64_t results = 0;
  for (int64_t n = 1; n <= 4; ++n) results += TestRecord(n).results.size();
  EXPECT_EQ((*db)->QueryInt64("SELECT COUNT(*) FROM results WHERE record_id"
                              " BETWEEN 1 AND 4")
                .value_or(-1),
            results)
      << "the rebuild of records left the results alone";
}

TEST_F(BadRowsTest, AnIndexedKeyColumnThatDisagreesWithTheKeyIsABadRow) {
  // Filters select rows by these columns (schema 4's indexes), so a damaged
  // one must not pass for the key's own value.
  Damage("UPDATE records SET in_type = 'f16' WHERE id = 2");
  Damage("UPDATE records SET cudnn_version = 1 WHERE id = 4");
  EXPECT_THAT(
      Rows(),
      ElementsAre("1", HasSubstr("2: cudnn_version 91900, in_type \"f16\""),
                  "3", HasSubstr("4: cudnn_version 1, in_type"), "5"));
  // The damaged value selects the row: it is reported, not taken for a
  // record of that value.
  RecordFilter f16;
  f16.fields["in_type"] = "f16";
  EXPECT_THAT(Rows(f16), ElementsAre(HasSubstr("2: cudnn_version")));
}

TEST_F(BadRowsTest, AStagedImportOfTheSameKeyReplacesADamagedRow) {
  Damage("UPDATE records SET host = CAST(x'ff7a' AS TEXT) WHERE id = 2");
  absl::StatusOr<std::unique_ptr<Store::StagedImport>> import =
      store_->BeginImport();
  ASSERT_TRUE(import.ok()) << import.status();
  ASSERT_TRUE((*import)->Add(TestRecord(2)).ok());
  ASSERT_TRUE((*import)->Commit().ok());
  import->reset();
  EXPECT_THAT(Rows(), ElementsAre("1", "2", "3", "4", "5"));
  absl::StatusOr<std::optional<Record>> got = store_->Get(StemKey(2));
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got->has_value());
  ExpectSameRecord(**got, TestRecord(2));
}

TEST_F(BadRowsTest, QuarantineTablesOfAnOlderFileGainTheNewColumns) {
  // quarantined_records as a schema 3 store made it: no in_type, layout.
  Damage(
      "CREATE TABLE quarantined_records(quarantine_id INTEGER PRIMARY KEY,"
      " quarantined_at_us INTEGER NOT NULL, reason TEXT NOT NULL, id,"
      " key_version, key_hash, key_text, gpu_model, cudnn_version, op,"
      " measured_at_us, host, gpu_uuid, driver_version, finder, repeats,"
      " workspace_cap_bytes, search_ms, verified, served_count,"
      " last_served_us, timing_version)");
  Damage("UPDATE records SET layout = 'nhwc' WHERE id = 3");
  absl::StatusOr<std::vector<BadRow>> moved = store_->QuarantineBadRows();
  ASSERT_TRUE(moved.ok()) << moved.status();
  ASSERT_EQ(moved->size(), 1u);
  EXPECT_EQ((*moved)[0].id, 3);

  auto db = sql::Database::Open(path_, sql::Database::Mode::kReadOnly, 5000);
  ASSERT_TRUE(db.ok()) << db.status();
  auto kept = (*db)->GetUniqueStatement(
      "SELECT id, in_type, layout FROM quarantined_records");
  ASSERT_TRUE(kept.ok()) << kept.status();
  ASSERT_TRUE(kept->Step().value_or(false));
  EXPECT_EQ(kept->ColumnInt64(0), 3);
  EXPECT_EQ(kept->ColumnText(1), "f32");
  EXPECT_EQ(kept->ColumnText(2), "nhwc");  // as stored
  db->reset();

  // The quarantine tables pass the bounded check at open and the full one.
  Reopen();
  ASSERT_NE(store_, nullptr);
  EXPECT_TRUE(store_->QuickCheck().ok());
  EXPECT_THAT(Rows(), ElementsAre("1", "2", "4", "5"));
}

TEST_F(BadRowsTest, AFlippedByteInAnIndexedColumnIsReplacedOrQuarantined) {
  // The GPU model's index entry keeps the byte the row lost, which SQLite
  // meets (SQLITE_CORRUPT_INDEX) when the row is replaced or deleted.
  auto flip_gpu_model = [&](int64_t n) {
    store_.reset();
    const std::string key = StemKey(n).ToText();
    ASSERT_TRUE(
        testing_util::FlipByte(path_, key + "Simulated GPU", key.size(), 0x02));
    Reopen();
  };
  flip_gpu_model(3);
  EXPECT_THAT(Rows(), ElementsAre("1", "2", HasSubstr("3: gpu_model \"Qimul"),
                                  "4", "5"));
  absl::StatusOr<std::unique_ptr<Store::StagedImport>> import =
      store_->BeginImport();
  ASSERT_TRUE(import.ok()) << import.status();
  ASSERT_TRUE((*import)->Add(TestRecord(3)).ok());
  absl::StatusOr<int64_t> committed = (*import)->Commit();
  ASSERT_TRUE(committed.ok()) << committed.status();
  import->reset();
  EXPECT_THAT(Rows(), ElementsAre("1", "2", "3", "4", "5"));

  flip_gpu_model(4);
  absl::StatusOr<std::vector<BadRow>> moved = store_->QuarantineBadRows();
  ASSERT_TRUE(moved.ok()) << moved.status();
  ASSERT_EQ(moved->size(), 1u);
  EXPECT_THAT(Rows(), ElementsAre("1", "2", "3", "5"));
  // A fresh id, never the quarantined 4: past every id handed out, and the
  // import's replacement of record 3 took 6 (an upsert takes an id even
  // where it updates).
  EXPECT_EQ(MustPut(*store_, TestRecord(4)), 7);

  store_.reset();
  auto db = sql::Database::Open(path_, sql::Database::Mode::kReadOnly, 5000);
  ASSERT_TRUE(db.ok()) << db.status();
  auto check = (*db)->GetUniqueStatement("PRAGMA integrity_check");
  ASSERT_TRUE(check.ok()) << check.status();
  ASSERT_TRUE(check->Step().value_or(false));
  EXPECT_EQ(check->ColumnText(0), "ok");
}

}  // namespace
}  // namespace tunedb::store_test
