// Store behaviour that does not depend on the file: run on ":memory:" (reads
// on the write connection) and on a file (reads on the read pool).
#include <algorithm>
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

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

class StoreTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    Store::Options options;
    options.path = GetParam() ? ":memory:" : dir_.File("store.db");
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  int64_t MustPut(const Record& record) {
    return store_test::MustPut(*store_, record);
  }

  std::vector<int64_t> QueryIds(const RecordFilter& filter,
                                int64_t after_id = 0, int limit = 0) {
    return store_test::QueryIds(*store_, filter, after_id, limit);
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreTest, PutThenGetReturnsEveryField) {
  const Record record = TestRecord(7);
  const int64_t id = MustPut(record);
  EXPECT_GT(id, 0);

  absl::StatusOr<std::optional<Record>> got = store_->Get(record.key);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->id, id);
  EXPECT_EQ((*got)->served_count, 0);
  ExpectSameRecord(**got, record);
}

TEST_P(StoreTest, GraphRecordsKeepEngineConfigsNotesAndPlans) {
  const Record graph = GraphTestRecord(7);
  const Record legacy = TestRecord(7);
  const int64_t graph_id = MustPut(graph);
  const int64_t legacy_id = MustPut(legacy);
  EXPECT_NE(graph_id, legacy_id);  // the api field keeps the keys apart
  absl::StatusOr<std::optional<Record>> got = store_->Get(graph.key);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got->has_value());
  ExpectSameRecord(**got, graph);
  EXPECT_EQ((*got)->results[0].knobs, graph.results[0].knobs);
  EXPECT_EQ((*got)->results[0].plan, graph.results[0].plan);
  EXPECT_TRUE((*got)->results[1].plan.empty());
  got = store_->Get(legacy.key);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_TRUE((*got)->results[0].knobs.empty());
  EXPECT_EQ((*got)->key.problem.api, ConvApi::kLegacy);
  EXPECT_THAT(QueryIds({{{"api", "graph"}}}), ElementsAre(graph_id));
  EXPECT_THAT(QueryIds({{{"api", "legacy"}}}), ElementsAre(legacy_id));
}

TEST_P(StoreTest, AQueryWithoutPlansReadsEverythingElseOfTheRecords) {
  const Record graph = GraphTestRecord(7);
  ASSERT_FALSE(graph.results[0].plan.empty());
  MustPut(graph);
  RecordFilter filter{{{"api", "graph"}}};
  filter.without_plans = true;
  std::vector<Record> read;
  ASSERT_TRUE(store_
                  ->Query(filter, 0, 0,
                          [&](const Record& r) {
                            read.push_back(r);
                            return true;
                          })
                  .ok());
  ASSERT_EQ(read.size(), 1u);
  ASSERT_EQ(read[0].results.size(), graph.results.size());
  Record expected = graph;
  for (AlgoResult& r : expected.results) r.plan.clear();
  ExpectSameRecord(read[0], expected);
  EXPECT_EQ(read[0].results[0].knobs, graph.results[0].knobs);
  // The store's copy keeps its plans.
  absl::StatusOr<std::optional<Record>> got = store_->Get(graph.key);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->results[0].plan, graph.results[0].plan);
}

TEST_P(StoreTest, CudnnVersionsListsEachStoredVersionOnceInOrder) {
  EXPECT_THAT(*store_->CudnnVersions(), ElementsAre());
  Record newer = TestRecord(1);
  newer.key.device.cudnn_version = 91900;
  Record older = TestRecord(2);
  older.key.device.cudnn_version = 91400;
  Record another = TestRecord(3);
  another.key.device.cudnn_version = 91900;
  MustPut(newer);
  MustPut(older);
  MustPut(another);
  EXPECT_THAT(*store_->CudnnVersions(), ElementsAre(91400, 91900));
}

TEST_P(StoreTest, GetOfUnknownKeyIsEmpty) {
  MustPut(TestRecord(1));
  absl::StatusOr<std::optional<Record>> got = store_->Get(StemKey(2));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_FALSE(got->has_value());
}

TEST_P(StoreTest, KeysDifferingOnlyInDeviceAreDistinct) {
  MustPut(TestRecord(1, "GPU A"));
  MustPut(TestRecord(1, "GPU B"));
  absl::StatusOr<std::optional<Record>> got = store_->Get(StemKey(1, "GPU B"));
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->key.device.gpu_model, "GPU B");
  EXPECT_EQ(store_->Count().value_or(-1), 2);
}

TEST_P(StoreTest, ReplaceKeepsIdAndServedCountButReplacesRanking) {
  Record first = TestRecord(3);
  const int64_t id = MustPut(first);
  ASSERT_TRUE(store_->AddServed({{id, 4}}).ok());

  Record second = TestRecord(3);
  second.host = "other-host";
  second.measured_at_us += 1000;
  second.results.resize(1);
  second.results[0].launch.median_ms = 0.5;
  EXPECT_EQ(MustPut(second), id);

  absl::StatusOr<std::optional<Record>> got = store_->Get(second.key);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->id, id);
  EXPECT_EQ((*got)->served_count, 4);
  ExpectSameRecord(**got, second);
  EXPECT_EQ(store_->Count().value_or(-1), 1);
}

TEST_P(StoreTest, AddServedAccumulatesAndIgnoresUnknownIds) {
  const int64_t a = MustPut(TestRecord(1));
  const int64_t b = MustPut(TestRecord(2));
  ASSERT_TRUE(store_->AddServed({{a, 2}, {b, 1}}).ok());
  ASSERT_TRUE(store_->AddServed({{a, 5}, {b + 1000, 9}}).ok());
  EXPECT_EQ(store_->Get(StemKey(1))->value().served_count, 7);
  EXPECT_EQ(store_->Get(StemKey(2))->value().served_count, 1);
  EXPECT_TRUE(store_->AddServed({}).ok());
}

TEST_P(StoreTest, NegativeRecordIsStoredAndRead) {
  const Record negative = NegativeRecord(9);
  ASSERT_FALSE(negative.supported());
  MustPut(negative);
  absl::StatusOr<std::optional<Record>> got = store_->Get(negative.key);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_FALSE((*got)->supported());
  ExpectSameRecord(**got, negative);
}

TEST_P(StoreTest, RecordWithoutResultsRoundTrips) {
  Record empty = TestRecord(10);
  empty.results.clear();
  MustPut(empty);
  absl::StatusOr<std::optional<Record>> got = store_->Get(empty.key);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_TRUE((*got)->results.empty());
}

TEST_P(StoreTest, PutRefusesAnInvalidKey) {
  Record bad = TestRecord(1);
  bad.key.problem.n = 0;
  absl::StatusOr<int64_t> id = store_->Put(bad);
  EXPECT_EQ(id.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Count().value_or(-1), 0);
}

TEST_P(StoreTest, PutAllIsAllOrNothing) {
  std::vector<Record> records = {TestRecord(1), TestRecord(2), TestRecord(3)};
  records[2].key.problem.n = 0;
  EXPECT_FALSE(store_->PutAll(records).ok());
  EXPECT_EQ(store_->Count().value_or(-1), 0);

  records[2] = TestRecord(3);
  ASSERT_TRUE(store_->PutAll(records).ok());
  EXPECT_EQ(store_->Count().value_or(-1), 3);
  ExpectSameRecord(store_->Get(StemKey(2))->value(), records[1]);
}

TEST_P(StoreTest, QueryFiltersByKeyFields) {
  const int64_t a1 = MustPut(TestRecord(1, "GPU A"));
  const int64_t b1 = MustPut(TestRecord(1, "GPU B"));
  const int64_t a2 = MustPut(TestRecord(2, "GPU A", ConvOp::kBackwardData));
  const int64_t b2 = MustPut(TestRecord(2, "GPU B", ConvOp::kBackwardData));

  EXPECT_THAT(QueryIds({}), ElementsAre(a1, b1, a2, b2));
  EXPECT_THAT(QueryIds({{{"gpu", "GPU A"}}}), ElementsAre(a1, a2));
  EXPECT_THAT(QueryIds({{{"op", "bwd_data"}}}), ElementsAre(a2, b2));
  EXPECT_THAT(QueryIds({{{"n", "1"}}}), ElementsAre(a1, b1));
  EXPECT_THAT(QueryIds({{{"gpu", "GPU B"}, {"n", "2"}}}), ElementsAre(b2));
  EXPECT_THAT(QueryIds({{{"cudnn", "9.19.0"}, {"layout", "nchw"}}}),
              ElementsAre(a1, b1, a2, b2));
  EXPECT_THAT(QueryIds({{{"cudnn", "9.1.0"}}}), ElementsAre());
  EXPECT_THAT(QueryIds({{{"gpu", "GPU C"}}}), ElementsAre());
}

TEST_P(StoreTest, QueryReturnsWholeRecords) {
  const Record record = TestRecord(5, "GPU A");
  MustPut(record);
  std::vector<Record> seen;
  ASSERT_TRUE(store_
                  ->Query({{{"gpu", "GPU A"}}}, 0, 0,
                          [&](const Record& r) {
                            seen.push_back(r);
                            return true;
                          })
                  .ok());
  ASSERT_EQ(seen.size(), 1u);
  ExpectSameRecord(seen[0], record);
}

TEST_P(StoreTest, QueryFiltersByTimeRange) {
  const int64_t t0 = MustPut(TestRecord(1, "G", ConvOp::kForward, 1000));
  const int64_t t1 = MustPut(TestRecord(2, "G", ConvOp::kForward, 2000));
  const int64_t t2 = MustPut(TestRecord(3, "G", ConvOp::kForward, 3000));

  RecordFilter since;
  since.since_us = 2000;
  EXPECT_THAT(QueryIds(since), ElementsAre(t1, t2));
  RecordFilter until;
  until.until_us = 2000;
  EXPECT_THAT(QueryIds(until), ElementsAre(t0));
  RecordFilter both;
  both.since_us = 1500;
  both.until_us = 3000;
  EXPECT_THAT(QueryIds(both), ElementsAre(t1));
  both.fields["n"] = "3";
  EXPECT_THAT(QueryIds(both), ElementsAre());
}

TEST_P(StoreTest, QueryPagesWithAfterIdAndLimit) {
  std::vector<int64_t> all;
  for (int n = 1; n <= 7; ++n) all.push_back(MustPut(TestRecord(n)));

  EXPECT_THAT(QueryIds({}, 0, 3), ElementsAre(all[0], all[1], all[2]));
  std::vector<int64_t> paged;
  int64_t after = 0;
  while (true) {
    std::vector<int64_t> page = QueryIds({}, after, 3);
    if (page.empty()) break;
    EXPECT_LE(page.size(), 3u);
    paged.insert(paged.end(), page.begin(), page.end());
    after = page.back();
  }
  EXPECT_THAT(paged, ElementsAreArray(all));
  EXPECT_THAT(QueryIds({}, all[5]), ElementsAre(all[6]));
}

TEST_P(StoreTest, QueryCrossesInternalBatchesInIdOrder) {
  std::vector<Record> records;
  for (int n = 1; n <= 600; ++n) records.push_back(TestRecord(n));
  ASSERT_TRUE(store_->PutAll(records).ok());
  std::vector<int64_t> ids = QueryIds({});
  ASSERT_EQ(ids.size(), 600u);
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  EXPECT_EQ(QueryIds({}, 0, 300).size(), 300u);
  EXPECT_EQ(QueryIds({{{"n", "599"}}}).size(), 1u);
}

TEST_P(StoreTest, QueryStopsWhenVisitReturnsFalse) {
  for (int n = 1; n <= 5; ++n) MustPut(TestRecord(n));
  int visits = 0;
  ASSERT_TRUE(
      store_->Query({}, 0, 0, [&](const Record&) { return ++visits < 2; })
          .ok());
  EXPECT_EQ(visits, 2);
}

TEST_P(StoreTest, VisitMayCallBackIntoTheStore) {
  const int64_t id = MustPut(TestRecord(1));
  absl::Status status = store_->Query({}, 0, 0, [&](const Record& record) {
    EXPECT_TRUE(store_->AddServed({{record.id, 1}}).ok());
    EXPECT_TRUE(store_->Get(record.key).ok());
    return true;
  });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(store_->Get(StemKey(1))->value().served_count, 1);
  EXPECT_EQ(store_->Get(StemKey(1))->value().id, id);
}

TEST_P(StoreTest, QueryAndDeleteRefuseUnknownFields) {
  absl::Status status = store_->Query({{{"colour", "red"}}}, 0, 0,
                                      [](const Record&) { return true; });
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("colour"));
  EXPECT_EQ(store_->Delete({{{"colour", "red"}}}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(StoreTest, DeleteRemovesOnlyMatchingRecords) {
  MustPut(TestRecord(1, "GPU A", ConvOp::kForward, 1000));
  const int64_t b1 = MustPut(TestRecord(1, "GPU B", ConvOp::kForward, 1000));
  MustPut(TestRecord(2, "GPU A", ConvOp::kForward, 5000));
  const int64_t b2 = MustPut(TestRecord(2, "GPU B", ConvOp::kForward, 5000));

  EXPECT_EQ(store_->Delete({{{"gpu", "GPU A"}}}).value_or(-1), 2);
  EXPECT_THAT(QueryIds({}), ElementsAre(b1, b2));
  EXPECT_FALSE(store_->Get(StemKey(1, "GPU A"))->has_value());

  RecordFilter late;
  late.since_us = 4000;
  EXPECT_EQ(store_->Delete(late).value_or(-1), 1);
  EXPECT_THAT(QueryIds({}), ElementsAre(b1));
  EXPECT_EQ(store_->Delete({{{"gpu", "GPU C"}}}).value_or(-1), 0);

  EXPECT_EQ(store_->Delete({}).value_or(-1), 1);
  EXPECT_EQ(store_->Count().value_or(-1), 0);
}

TEST_P(StoreTest, DeletedKeyCanBeStoredAgain) {
  MustPut(TestRecord(1));
  ASSERT_EQ(store_->Delete({}).value_or(-1), 1);
  const Record again = TestRecord(1);
  MustPut(again);
  ExpectSameRecord(store_->Get(again.key)->value(), again);
}

TEST_P(StoreTest, QuickCheckPassesOnAHealthyStore) {
  MustPut(TestRecord(1));
  EXPECT_TRUE(store_->QuickCheck().ok());
  EXPECT_TRUE(store_->Checkpoint().ok());
}

TEST_P(StoreTest, SizeIsReportedForFilesOnly) {
  MustPut(TestRecord(1));
  if (GetParam()) {
    EXPECT_EQ(store_->SizeBytes(), 0);
  } else {
    EXPECT_GT(store_->SizeBytes(), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(MemoryAndFile, StoreTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Memory" : "File";
                         });

TEST(StoreOptionsTest, RefusesBadOptions) {
  Store::Options options;
  options.path = ":memory:";
  options.synchronous = "SOMETIMES";
  EXPECT_EQ(Store::Open(options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.synchronous = "normal";
  EXPECT_TRUE(Store::Open(options).ok());
  options.read_only = true;
  EXPECT_EQ(Store::Open(options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.read_only = false;
  options.path = "";
  EXPECT_EQ(Store::Open(options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tunedb::store_test
