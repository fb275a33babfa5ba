// RecordFilter: validation of field names and time bounds, and matching.
#include <map>
#include <string>
#include <utility>

#include "common/key_fields.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/store.h"
#include "tests/store/store_test_util.h"

namespace tunedb::store_test {
namespace {

using ::testing::HasSubstr;

RecordFilter Only(std::map<std::string, std::string> fields) {
  RecordFilter filter;
  filter.fields = std::move(fields);
  return filter;
}

TEST(RecordFilterTest, AcceptsEveryKeyFieldName) {
  RecordFilter filter;
  for (auto name : KeyFieldNames()) filter.fields[std::string(name)] = "x";
  EXPECT_TRUE(filter.Validate().ok());
  EXPECT_FALSE(filter.empty());
  EXPECT_TRUE(RecordFilter().empty());
}

TEST(RecordFilterTest, RefusesAnUnknownFieldByName) {
  RecordFilter filter;
  filter.fields["gpu"] = "x";
  filter.fields["batch"] = "64";
  absl::Status status = filter.Validate();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("\"batch\""));
}

TEST(RecordFilterTest, RefusesBadTimeBounds) {
  RecordFilter negative;
  negative.since_us = -1;
  EXPECT_EQ(negative.Validate().code(), absl::StatusCode::kInvalidArgument);
  RecordFilter inverted;
  inverted.since_us = 20;
  inverted.until_us = 10;
  EXPECT_EQ(inverted.Validate().code(), absl::StatusCode::kInvalidArgument);
  RecordFilter open_ended;
  open_ended.until_us = 10;
  EXPECT_TRUE(open_ended.Validate().ok());
}

TEST(RecordFilterTest, MatchesUnescapedKeyFieldValues) {
  const Record record = TestRecord(64, "NVIDIA H200", ConvOp::kBackwardFilter);
  EXPECT_TRUE(RecordFilter().Matches(record));
  EXPECT_TRUE(Only({{"gpu", "NVIDIA H200"}}).Matches(record));
  EXPECT_FALSE(Only({{"gpu", "NVIDIA%20H200"}}).Matches(record));
  EXPECT_TRUE(Only({{"op", "bwd_filter"}, {"n", "64"}}).Matches(record));
  EXPECT_FALSE(Only({{"op", "bwd_filter"}, {"n", "65"}}).Matches(record));
  EXPECT_TRUE(Only({{"cudnn", "9.19.0"}, {"cc", "9.0"}}).Matches(record));
  EXPECT_TRUE(Only({{"in", "224x224"}}).Matches(record));
  EXPECT_TRUE(Only({{"kv", "1"}}).Matches(record));
}

TEST(RecordFilterTest, MatchesAHalfOpenTimeRange) {
  Record record = TestRecord(1);
  record.measured_at_us = 1000;
  RecordFilter filter;
  filter.since_us = 1000;
  filter.until_us = 2000;
  EXPECT_TRUE(filter.Matches(record));
  record.measured_at_us = 1999;
  EXPECT_TRUE(filter.Matches(record));
  record.measured_at_us = 2000;
  EXPECT_FALSE(filter.Matches(record));
  record.measured_at_us = 999;
  EXPECT_FALSE(filter.Matches(record));
  filter.until_us = 0;
  record.measured_at_us = 1'000'000'000;
  EXPECT_TRUE(filter.Matches(record));
}

}  // namespace
}  // namespace tunedb::store_test
