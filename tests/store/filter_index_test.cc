// Key-field filters read through indexes: a filter naming gpu, cudnn, op,
// in_type or layout is answered by an index search (EXPLAIN QUERY PLAN),
// finds exactly the matching records, and a filter of other fields only is
// a scan that says so (RecordFilter::UsesIndex); a problem's text is
// compared in SQL. A version 3 file is migrated to the indexed columns.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/record_scan.h"
#include "store/sql/database.h"
#include "store/sql/statement.h"
#include "store/sql/store_schema.h"
#include "store/sqlite_store.h"
#include "tests/store/store_test_util.h"

namespace tunedb::store_test {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

class FilterIndexTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }

  void Open() {
    store_.reset();
    Store::Options options;
    options.path = path_;
    absl::StatusOr<std::unique_ptr<SqliteStore>> store =
        SqliteStore::Open(options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  int64_t MustPut(const Record& record) {
    return store_test::MustPut(*store_, record);
  }

  std::vector<int64_t> QueryIds(const RecordFilter& filter) {
    return store_test::QueryIds(*store_, filter);
  }

  // How SQLite reads the records for `filter`: the EXPLAIN QUERY PLAN of
  // the scan the store runs for it (ScanSql), one "; "-separated line, e.g.
  // "SEARCH records USING INDEX records_by_gpu_model (gpu_model=? AND
  // rowid>?)" for an indexed field, or "SEARCH records USING INTEGER PRIMARY
  // KEY (rowid>?)" for a filter that reads every record from the cursor on.
  std::string Plan(const RecordFilter& filter) {
    absl::StatusOr<std::string> plan = ExplainScan(filter);
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.value_or("");
  }

  absl::StatusOr<std::string> ExplainScan(const RecordFilter& filter) {
    RETURN_IF_ERROR(filter.Validate());
    std::vector<ScanValue> values;
    const std::string sql = ScanSql(filter, &values);
    ASSIGN_OR_RETURN(std::unique_ptr<sql::Database> db,
                     sql::Database::Open(path_, sql::Database::Mode::kReadOnly,
                                         /*busy_timeout_ms=*/2000));
    ASSIGN_OR_RETURN(sql::Statement plan,
                     db->GetUniqueStatement("EXPLAIN QUERY PLAN " + sql));
    std::vector<std::string> steps;
    while (true) {
      ASSIGN_OR_RETURN(bool row, plan.Step());
      if (!row) return absl::StrJoin(steps, "; ");
      steps.push_back(plan.ColumnText(3));
    }
  }

  TempDir dir_;
  const std::string path_ = dir_.File("store.db");
  std::unique_ptr<SqliteStore> store_;
};

TEST_F(FilterIndexTest, EachCommonKeyFieldIsSearchedThroughItsIndex) {
  const struct {
    const char* field;
    const char* value;
    const char* index;
  } kCases[] = {
      {"gpu", "Rare GPU", "records_by_gpu_model"},
      {"cudnn", "9.19.0", "records_by_cudnn_version"},
      {"op", "bwd_data", "records_by_op"},
      {"in_type", "f16", "records_by_in_type"},
      {"layout", "nhwc", "records_by_layout"},
  };
  for (const auto& c : kCases) {
    RecordFilter filter;
    filter.fields[c.field] = c.value;
    EXPECT_TRUE(filter.UsesIndex()) << c.field;
    const std::string plan = Plan(filter);
    EXPECT_THAT(plan, HasSubstr("SEARCH records USING INDEX"))
        << c.field << ": " << plan;
    EXPECT_THAT(plan, HasSubstr(c.index)) << c.field << ": " << plan;
  }
}

TEST_F(FilterIndexTest, AFilterOfOtherFieldsOnlyIsAScanAndSaysSo) {
  RecordFilter filter;
  filter.fields["n"] = "64";
  EXPECT_FALSE(filter.UsesIndex());
  // Every record from the cursor on, in id order.
  EXPECT_THAT(Plan(filter), AllOf(HasSubstr("INTEGER PRIMARY KEY (rowid>?)"),
                                  Not(HasSubstr("USING INDEX"))));
  filter.fields["layout"] = "nchw";
  EXPECT_TRUE(filter.UsesIndex());
  EXPECT_THAT(Plan(filter), HasSubstr("USING INDEX records_by_layout"));
}

TEST_F(FilterIndexTest, IndexedFiltersFindExactlyTheMatchingRecords) {
  Record nhwc = TestRecord(1);
  nhwc.key.problem.layout = Layout::kNHWC;
  nhwc.key.problem.input_type = nhwc.key.problem.output_type = DataType::kHalf;
  nhwc.key.problem.allow_tf32 = false;
  const int64_t a = MustPut(nhwc);
  Record old_cudnn = TestRecord(2, "Rare GPU", ConvOp::kBackwardData);
  old_cudnn.key.device.cudnn_version = 80907;
  const int64_t b = MustPut(old_cudnn);
  const int64_t c = MustPut(TestRecord(3));

  EXPECT_THAT(QueryIds({{{"gpu", "Rare GPU"}}}), ElementsAre(b));
  EXPECT_THAT(QueryIds({{{"cudnn", "8.9.7"}}}), ElementsAre(b));
  EXPECT_THAT(QueryIds({{{"cudnn", "9.19.0"}}}), ElementsAre(a, c));
  // Not how a key spells a version: matches nothing, as Matches() says.
  EXPECT_THAT(QueryIds({{{"cudnn", "9.19"}}}), IsEmpty());
  EXPECT_THAT(QueryIds({{{"cudnn", "09.19.0"}}}), IsEmpty());
  EXPECT_THAT(QueryIds({{{"op", "bwd_data"}}}), ElementsAre(b));
  EXPECT_THAT(QueryIds({{{"layout", "nhwc"}}}), ElementsAre(a));
  EXPECT_THAT(QueryIds({{{"in_type", "f16"}}}), ElementsAre(a));
  EXPECT_THAT(QueryIds({{{"in_type", "f16"}, {"layout", "nchw"}}}), IsEmpty());
  RecordFilter rare_and_n;
  rare_and_n.fields = {{"gpu", "Rare GPU"}, {"n", "2"}};
  EXPECT_THAT(QueryIds(rare_and_n), ElementsAre(b));
  absl::StatusOr<int64_t> deleted = store_->Delete({{{"layout", "nhwc"}}});
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 1);
  EXPECT_THAT(QueryIds({}), ElementsAre(b, c));
}

TEST_F(FilterIndexTest, TheSameProblemUnderOtherVersionsIsFoundInSqlByItsText) {
  const Record current = TestRecord(1);
  Record older = TestRecord(1);
  older.key.device.cudnn_version = 91400;
  Record other_problem = TestRecord(2);  // another batch size
  const int64_t a = MustPut(current);
  const int64_t b = MustPut(older);
  const int64_t c = MustPut(other_problem);
  const RecordFilter filter = RecordFilter::OfKeyFieldsBut(
      current.key,
      [](const std::string& name) { return name == "cudnn" || name == "cuda"; });
  EXPECT_EQ(filter.problem_text, current.key.problem.ToText());
  std::vector<ScanValue> values;
  EXPECT_THAT(ScanSql(filter, &values), HasSubstr("instr(key_text, ' op=')"));
  EXPECT_THAT(QueryIds(filter), ElementsAre(a, b));
  EXPECT_TRUE(filter.Matches(older));
  EXPECT_FALSE(filter.Matches(other_problem));
  // Leaving out a problem field leaves the problem text out too.
  const RecordFilter any_batch = RecordFilter::OfKeyFieldsBut(
      current.key, [](const std::string& name) { return name == "n"; });
  EXPECT_TRUE(any_batch.problem_text.empty());
  EXPECT_THAT(QueryIds(any_batch), ElementsAre(a, c));
}

TEST_F(FilterIndexTest, AVersion3FileIsMigratedWithItsKeyColumnsFilled) {
  Record nhwc = TestRecord(1);
  nhwc.key.problem.layout = Layout::kNHWC;
  const int64_t a = MustPut(nhwc);
  const int64_t b = MustPut(TestRecord(2));
  store_.reset();
  {
    // What version 3 had: no in_type or layout, no key-field indexes, and
    // (schema 5) no engine-config columns, (schema 6) no fleet outbox.
    auto db = sql::Database::Open(path_, sql::Database::Mode::kReadWrite,
                                  /*busy_timeout_ms=*/2000);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE((*db)
                    ->Execute("DROP INDEX records_by_gpu_model;"
                              "DROP INDEX records_by_cudnn_version;"
                              "DROP INDEX records_by_op;"
                              "DROP INDEX records_by_in_type;"
                              "DROP INDEX records_by_layout;"
                              "ALTER TABLE records DROP COLUMN in_type;"
                              "ALTER TABLE records DROP COLUMN layout;"
                              "ALTER TABLE results DROP COLUMN knobs;"
                              "ALTER TABLE results DROP COLUMN numerical_notes;"
                              "ALTER TABLE results DROP COLUMN behavior_notes;"
                              "ALTER TABLE results DROP COLUMN plan;"
                              "ALTER TABLE results DROP COLUMN build_ms;"
                              "ALTER TABLE results DROP COLUMN heuristic_rank;"
                              "DROP TABLE fleet_outbox;"
                              "PRAGMA user_version = 3;")
                    .ok());
  }
  Open();
  auto db = sql::Database::Open(path_, sql::Database::Mode::kReadOnly,
                                /*busy_timeout_ms=*/2000);
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_EQ((*db)->QueryInt64("PRAGMA user_version").value_or(-1),
            kStoreSchemaVersion);
  // The migration fills the columns as a Put of the record would.
  EXPECT_EQ((*db)
                ->QueryInt64(
                    absl::StrCat("SELECT COUNT(*) FROM records WHERE id = ", a,
                                 " AND in_type = 'f32' AND layout = 'nhwc'"))
                .value_or(-1),
            1);
  EXPECT_THAT(QueryIds({{{"layout", "nhwc"}}}), ElementsAre(a));
  EXPECT_THAT(QueryIds({{{"layout", "nchw"}, {"in_type", "f32"}}}),
              ElementsAre(b));
  EXPECT_THAT(Plan({{{"layout", "nhwc"}}}), HasSubstr("records_by_layout"));
}

}  // namespace
}  // namespace tunedb::store_test
