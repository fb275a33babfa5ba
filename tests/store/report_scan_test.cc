// Store::ReportWalk, the read made for the report: the aggregate of its
// rows is the aggregate of the same store's records read by Query, byte for
// byte as JSON, across batches; split into parts (id ranges read at once),
// merged, it is the one-part walk's; a row whose read parts are damaged is
// listed with the reason Query gives, and the rest are aggregated.
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/report_data.h"
#include "common/report_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/report_scan.h"
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

  // Where one part's records and unreadable rows go: `into`, counting the
  // rows in *rows.
  static Store::ReportPart Into(ReportAggregator& into, int64_t* rows) {
    return {[&into, rows](const ReportRecord& r) {
              ++*rows;
              into.Add(r);
              return true;
            },
            [&into, rows](const BadRow& bad) {
              ++*rows;
              into.AddUnreadable({bad.id, bad.key_text, bad.reason});
              return true;
            }};
  }

  // The store walked in `parts` parts, their aggregates merged in order;
  // *rows: the rows each part was handed.
  ReportData Walked(size_t parts = 1, std::vector<int64_t>* rows = nullptr) {
    std::vector<ReportAggregator> aggregators(parts);
    std::vector<int64_t> counts(parts);
    std::vector<Store::ReportPart> into;
    for (size_t i = 0; i < parts; ++i) {
      into.push_back(Into(aggregators[i], &counts[i]));
    }
    absl::Status status = store_->ReportWalk(into);
    EXPECT_TRUE(status.ok()) << status;
    for (size_t i = 1; i < parts; ++i) aggregators[0].Merge(aggregators[i]);
    if (rows != nullptr) *rows = counts;
    return aggregators[0].Finish();
  }

  // The one-part walk's aggregate, checked to be Query's of the same store
  // byte for byte as JSON.
  ReportData WalkedAsQueried() {
    ReportData walked = Walked();
    EXPECT_EQ(ReportDataToJson(walked), ReportDataToJson(Queried()));
    return walked;
  }

  ReportData Queried() {
    ReportAggregator aggregator;
    int64_t rows = 0;
    absl::Status status = store_->Query(
        {}, 0, 0,
        [&](const Record& r) {
          aggregator.Add(r);
          return true;
        },
        Into(aggregator, &rows).bad_row);
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
  const std::string walked = ReportDataToJson(WalkedAsQueried());
  absl::StatusOr<ReportData> read = ReportDataFromJson(walked);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->records, 9002);
  EXPECT_EQ(read->workspaces.size(), 20u);
  ASSERT_EQ(read->revalidations.size(), 1u);
  EXPECT_EQ(read->revalidations[0].compared, 1);
}

TEST_F(ReportScanTest, ASplitWalksAggregateIsTheOneThreadWalksExactly) {
  // Over two batches a part; revalidations whose sources lie in the other
  // half; more than 100 damaged rows in both halves; and the largest
  // workspace (2^30 bytes) shared by hundreds of records.
  PutSynthetic(12000);
  std::vector<Record> revalidated;
  for (int64_t i : {5, 6005, 11005}) {
    Record r = tuner::SyntheticRecord(i);  // i % 5 == 0: cuDNN 9.14.0
    r.key.device.cudnn_version = 91900;
    r.revalidated_from_cudnn = 91400;
    r.results[0].launch.median_ms *= 2;
    revalidated.push_back(r);
  }
  ASSERT_TRUE(store_->PutAll(revalidated).ok());
  Damage("UPDATE records SET key_hash = key_hash + 1 WHERE id % 53 = 7");
  const std::string one = ReportDataToJson(WalkedAsQueried());
  std::vector<int64_t> rows;
  const std::string split = ReportDataToJson(Walked(4, &rows));
  EXPECT_EQ(split, one);
  // Every row went to one part; where the machine has two hardware threads
  // the walk was split (the store's four read connections allow four).
  EXPECT_EQ(std::accumulate(rows.begin(), rows.end(), int64_t{0}), 12003);
  if (std::thread::hardware_concurrency() >= 2) {
    EXPECT_GT(rows[0], 0);
    EXPECT_GT(rows[1], 0);
  }
  absl::StatusOr<ReportData> read = ReportDataFromJson(split);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->unreadable, 227);
  EXPECT_EQ(read->unreadable_rows.back().id, 7 + 53 * 99);
  ASSERT_EQ(read->revalidations.size(), 1u);
  EXPECT_EQ(read->revalidations[0].compared, 3);
  EXPECT_EQ(read->workspaces.back().workspace_bytes, int64_t{1} << 30);
}

TEST_F(ReportScanTest, APartsFalseStopsTheWalkWithoutAnError) {
  PutSynthetic(3000);
  ReportAggregator first, second;
  int64_t first_rows = 0, second_rows = 0;
  Store::ReportPart stops = Into(second, &second_rows);
  stops.visit = [&](const ReportRecord&) {
    ++second_rows;
    return false;
  };
  EXPECT_TRUE(store_->ReportWalk({Into(first, &first_rows), stops}).ok());
  if (std::thread::hardware_concurrency() >= 2) {
    EXPECT_EQ(second_rows, 1);
  }
  EXPECT_LE(first_rows + second_rows, 3000);
}

TEST(ReportRangesTest, TheIdsSplitIntoConsecutiveRangesTheLastOpenAbove) {
  constexpr int64_t kAbove = std::numeric_limits<int64_t>::max();
  using Ranges = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(ReportRanges(1, 10, 3), (Ranges{{0, 3}, {3, 6}, {6, kAbove}}));
  EXPECT_EQ(ReportRanges(1, 10, 1), (Ranges{{0, kAbove}}));
  // An empty table: one range.
  EXPECT_EQ(ReportRanges(1, 0, 2), (Ranges{{0, kAbove}}));
  // More parts than ids: some ranges hold none, none overlap.
  EXPECT_EQ(ReportRanges(5, 6, 4),
            (Ranges{{0, 4}, {4, 5}, {5, 5}, {5, kAbove}}));
}

TEST_F(ReportScanTest, ADamagedRowIsListedWithQuerysReasonAndTheRestCount) {
  PutSynthetic(6);
  Damage("UPDATE records SET key_hash = key_hash + 1 WHERE id = 2");
  Damage(
      "UPDATE results SET math_type = 'tensor_oq' WHERE record_id = 4"
      " AND rank = 1");
  const ReportData walked = WalkedAsQueried();
  EXPECT_EQ(walked.records, 4);
  std::vector<std::string> rows;
  for (const UnreadableRow& row : walked.unreadable_rows) {
    rows.push_back(absl::StrCat(row.id, ": ", row.reason));
  }
  EXPECT_THAT(rows,
              ElementsAre("2: key_hash does not match key_text (one of them "
                          "is damaged)",
                          "4: results[1].math_type \"tensor_oq\" is unknown"));
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
