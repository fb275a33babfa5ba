// Store::ReportWalk, the read made for the report: the aggregate of its
// rows is the aggregate of the same store's records read by Query, byte for
// byte as JSON, across batches; a row whose read parts are damaged is
// listed with the reason Query gives, and the rest are aggregated.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/report_data.h"
#include "common/report_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/sql/database.h"
#include "store/store.h"
#include "tests/store/store_test_util.h"
#include "tests/tuner/report_records.h"

namespace tunedb::store_test {
namespace {

using ::testing::ElementsAre;

class ReportScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.File("report.db");
    Store::Options options;
    options.path = path_;
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  void PutSynthetic(int64_t count) {
    std::vector<Record> records;
    for (int64_t i = 0; i < count; ++i) {
      records.push_back(tuner::SyntheticRecord(i));
    }
    ASSERT_TRUE(store_->PutAll(records).ok());
  }

  // Runs `sql` on a second connection, as another program would.
  void Damage(const std::string& sql) {
    auto db = sql::Database::Open(path_, sql::Database::Mode::kReadWrite, 5000);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE((*db)->Execute(sql).ok()) << sql;
  }

  ReportData Walked() {
    ReportAggregator aggregator;
    absl::Status status = store_->ReportWalk(
        [&](const ReportRecord& r) {
          aggregator.Add(r);
          return true;
        },
        [&](const BadRow& bad) {
          aggregator.AddUnreadable({bad.id, bad.key_text, bad.reason});
          return true;
        });
    EXPECT_TRUE(status.ok()) << status;
    return aggregator.Finish();
  }

  ReportData Queried() {
    ReportAggregator aggregator;
    absl::Status status = store_->Query(
        {}, 0, 0,
        [&](const Record& r) {
          aggregator.Add(r);
          return true;
        },
        [&](const BadRow& bad) {
          aggregator.AddUnreadable({bad.id, bad.key_text, bad.reason});
          return true;
        });
    EXPECT_TRUE(status.ok()) << status;
    return aggregator.Finish();
  }

  TempDir dir_;
  std::string path_;
  std::unique_ptr<Store> store_;
};

TEST_F(ReportScanTest, TheWalksAggregateIsQuerysAggregateAcrossBatches) {
  PutSynthetic(9000);  // over two of the walk's batches
  // A revalidated record and one without results.
  Record revalidated = tuner::SyntheticRecord(0);
  revalidated.key.device.cudnn_version = 91900;
  revalidated.revalidated_from_cudnn = 91400;
  revalidated.results[0].launch.median_ms *= 2;
  Record empty = tuner::SyntheticRecord(9001);
  empty.results.clear();
  ASSERT_TRUE(store_->PutAll({revalidated, empty}).ok());
  const std::string walked = ReportDataToJson(Walked());
  EXPECT_EQ(walked, ReportDataToJson(Queried()));
  absl::StatusOr<ReportData> read = ReportDataFromJson(walked);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->records, 9002);
  EXPECT_EQ(read->workspaces.size(), 20u);
  ASSERT_EQ(read->revalidations.size(), 1u);
  EXPECT_EQ(read->revalidations[0].compared, 1);
}

TEST_F(ReportScanTest, ADamagedRowIsListedWithQuerysReasonAndTheRestCount) {
  PutSynthetic(6);
  Damage("UPDATE records SET key_hash = key_hash + 1 WHERE id = 2");
  Damage(
      "UPDATE results SET math_type = 'tensor_oq' WHERE record_id = 4"
      " AND rank = 1");
  const ReportData walked = Walked();
  EXPECT_EQ(walked.records, 4);
  std::vector<std::string> rows;
  for (const UnreadableRow& row : walked.unreadable_rows) {
    rows.push_back(absl::StrCat(row.id, ": ", row.reason));
  }
  EXPECT_THAT(rows,
              ElementsAre("2: key_hash does not match key_text (one of them "
                          "is damaged)",
                          "4: results[1].math_type \"tensor_oq\" is unknown"));
  EXPECT_EQ(ReportDataToJson(walked), ReportDataToJson(Queried()));
}

TEST_F(ReportScanTest, AGpuModelColumnThatDisagreesWithTheKeyIsUnreadable) {
  PutSynthetic(3);
  Damage("UPDATE records SET gpu_model = 'NVIDIA H300' WHERE id = 1");
  const ReportData walked = Walked();
  const ReportData queried = Queried();
  EXPECT_EQ(walked.records, 2);
  EXPECT_EQ(walked.records, queried.records);
  ASSERT_EQ(walked.unreadable, 1);
  EXPECT_EQ(walked.unreadable_rows[0].id, queried.unreadable_rows[0].id);
}

}  // namespace
}  // namespace tunedb::store_test
