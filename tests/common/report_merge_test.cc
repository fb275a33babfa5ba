// ReportAggregator::Merge: the records of a walk split in two, aggregated
// apart and merged in order, give the aggregate of one aggregator fed them
// all, byte for byte as JSON: totals and sums of times, the largest
// workspaces with their ties, the unreadable rows listed, the revalidations
// compared across the split.
#include <cstdint>
#include <string>
#include <vector>

#include "common/report_data.h"
#include "common/report_json.h"
#include "gtest/gtest.h"
#include "tests/tuner/report_records.h"

namespace tunedb {
namespace {

// A record, or a row that could not be read.
struct Item {
  Record record;
  bool unreadable = false;
};

// `count` synthetic records, every seventh a row that could not be read,
// and revalidations of records of both halves made in the second half.
std::vector<Item> Items(int64_t count) {
  std::vector<Item> items;
  for (int64_t i = 0; i < count; ++i) {
    items.push_back({tuner::SyntheticRecord(i), i % 7 == 3});
  }
  for (int64_t i : {int64_t{5}, count / 2 + 5}) {
    Record r = tuner::SyntheticRecord(i);  // cuDNN 9.14.0 (i % 5 == 0)
    r.key.device.cudnn_version = 91900;
    r.revalidated_from_cudnn = 91400;
    r.results[0].launch.median_ms *= 3;
    items.push_back({r, false});
  }
  Record driver = tuner::SyntheticRecord(count + 1);
  driver.driver_version = "580.65.06";
  driver.revalidated_from_driver = "575.57.08";
  items.push_back({driver, false});
  return items;
}

void Feed(ReportAggregator& a, const std::vector<Item>& items, size_t from,
          size_t to) {
  for (size_t i = from; i < to; ++i) {
    if (items[i].unreadable) {
      a.AddUnreadable({static_cast<int64_t>(i + 1), "kv=1 gpu=x", "damaged"});
    } else {
      a.Add(items[i].record);
    }
  }
}

std::string Whole(const std::vector<Item>& items) {
  ReportAggregator whole;
  Feed(whole, items, 0, items.size());
  return ReportDataToJson(whole.Finish());
}

std::string Merged(const std::vector<Item>& items, size_t split) {
  ReportAggregator first, second;
  Feed(first, items, 0, split);
  Feed(second, items, split, items.size());
  first.Merge(second);
  return ReportDataToJson(first.Finish());
}

TEST(ReportMergeTest, TwoHalvesMergedAreTheWholeByteForByte) {
  const std::vector<Item> items = Items(2000);
  const std::string whole = Whole(items);
  EXPECT_EQ(Merged(items, items.size() / 2), whole);
  EXPECT_EQ(Merged(items, 1), whole);
  EXPECT_EQ(Merged(items, 0), whole);
  EXPECT_EQ(Merged(items, items.size()), whole);
}

TEST(ReportMergeTest, TheWholeHoldsWhatTheSplitMustKeep) {
  // The checks above compare like with like: here, that the whole has
  // ties, the unreadable rows' cap and cross-split revalidations at all.
  const std::vector<Item> items = Items(2000);
  absl::StatusOr<ReportData> whole = ReportDataFromJson(Whole(items));
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_EQ(whole->workspaces.size(), 20u);
  // 2^30 bytes, the largest synthetic workspace, by more than 20 records:
  // the earliest 20 of them are kept, in record order.
  EXPECT_EQ(whole->workspaces.back().workspace_bytes,
            whole->workspaces.front().workspace_bytes);
  EXPECT_EQ(whole->unreadable, 286);
  ASSERT_EQ(whole->unreadable_rows.size(), kUnreadableRowsListed);
  EXPECT_EQ(whole->unreadable_rows.front().id, 4);
  EXPECT_EQ(whole->unreadable_rows.back().id, 4 + 7 * 99);
  ASSERT_EQ(whole->revalidations.size(), 2u);
  int64_t compared = 0;
  for (const RevalidationChange& c : whole->revalidations) {
    compared += c.compared;
  }
  EXPECT_EQ(compared, 2);
}

TEST(ReportMergeTest, AWorkspaceTieGoesToTheEarlierRecordAcrossTheMerge) {
  // Three records of one workspace size, and room for two: the first two.
  std::vector<Item> items;
  for (int64_t i = 0; i < 3; ++i) {
    Record r = tuner::SyntheticRecord(i);
    for (AlgoResult& a : r.results) a.workspace_bytes = 4096;
    items.push_back({r, false});
  }
  ReportAggregator first(2), second(2);
  Feed(first, items, 0, 1);
  Feed(second, items, 1, 3);
  first.Merge(second);
  const ReportData merged = first.Finish();
  ReportAggregator whole(2);
  Feed(whole, items, 0, 3);
  const ReportData expected = whole.Finish();
  ASSERT_EQ(merged.workspaces.size(), 2u);
  ASSERT_EQ(expected.workspaces.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(merged.workspaces[i].problem, expected.workspaces[i].problem);
    EXPECT_EQ(merged.workspaces[i].gpu_model,
              items[i].record.key.device.gpu_model);
  }
  EXPECT_NE(merged.workspaces[0].problem, merged.workspaces[1].problem);
}

}  // namespace
}  // namespace tunedb
