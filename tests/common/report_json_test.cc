// The report's aggregate as JSON (common/report_json.h): what the daemon
// writes reads back the same; text that is not a version-1 aggregate is
// INVALID_ARGUMENT saying what is wrong.
#include "common/report_json.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tunedb {
namespace {

using ::testing::HasSubstr;

ReportData AnAggregate() {
  ReportData d;
  d.records = 3;
  d.saved_ms = 1234.5678901234;
  d.served = 7;
  d.groups.push_back({"NVIDIA H100", 91900, 3, 1, 7, 1234.5678901234, 0.1,
                      1, 2});
  d.days.push_back({20454, 3, 1234.5678901234});
  d.ranks = {1, 0, 0, 0, 0, 1};
  d.gains = {0, 1, 0, 0, 0, 1};
  d.gains_unknown = 1;
  d.revalidations.push_back(
      {"NVIDIA H100", "cuDNN 9.14.0", "cuDNN 9.19.0", 1, 17, 1, 1, 0});
  d.workspaces.push_back({"NVIDIA H100", 91900, "fwd n1 c3", "1 tensor_op",
                          1 << 20, 0.25, -1, 4});
  d.models = {"resnet18"};
  d.planned = 12;
  d.unreadable = 1;
  d.unreadable_rows.push_back({9, "kv=1 gpu=\\xff", "key_hash does not match"});
  return d;
}

TEST(ReportJsonTest, AnAggregateReadsBackAsItWasWritten) {
  const std::string json = ReportDataToJson(AnAggregate());
  absl::StatusOr<ReportData> read = ReportDataFromJson(json);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(ReportDataToJson(*read), json);
  EXPECT_EQ(read->saved_ms, 1234.5678901234);  // doubles exactly
  EXPECT_EQ(read->workspaces[0].no_workspace_ms, -1);
  EXPECT_EQ(read->unreadable_rows[0].key_text, "kv=1 gpu=\\xff");
}

TEST(ReportJsonTest, AFleetsAggregateReadsBackWithItsHostsAndOneStoresHasNone) {
  ReportData fleet = AnAggregate();
  fleet.fleet = "postgresql://tunedb@db:5432/tunedb";
  fleet.hosts = {{"host-a", 1}, {"host-b", 2}};
  absl::StatusOr<ReportData> read =
      ReportDataFromJson(ReportDataToJson(fleet));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->fleet, fleet.fleet);
  ASSERT_EQ(read->hosts.size(), 2u);
  EXPECT_EQ(read->hosts[1].host, "host-b");
  EXPECT_EQ(read->hosts[1].records, 2);
  // One store's JSON is what readers before the fleet's report read.
  const nlohmann::json one = nlohmann::json::parse(ReportDataToJson(
      AnAggregate()));
  EXPECT_FALSE(one.contains("fleet"));
  EXPECT_FALSE(one.contains("hosts"));
  EXPECT_TRUE(ReportDataFromJson(one.dump())->fleet.empty());
}

TEST(ReportJsonTest, TheServedDaysReadBackAndAReportWithoutThemHasNone) {
  ReportData served = AnAggregate();
  served.served_days = {{20454, 5, 12.5}, {20455, 2, 0.1234567890123}};
  served.week_programs = {{20452, "train-resnet", 4, 10.25},
                          {20452, "", 3, 2.3654567890123}};
  const std::string json = ReportDataToJson(served);
  absl::StatusOr<ReportData> read = ReportDataFromJson(json);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(ReportDataToJson(*read), json);
  ASSERT_EQ(read->served_days.size(), 2u);
  EXPECT_EQ(read->served_days[1].day, 20455);
  EXPECT_EQ(read->served_days[1].served, 2);
  EXPECT_EQ(read->served_days[1].saved_ms, 0.1234567890123);
  ASSERT_EQ(read->week_programs.size(), 2u);
  EXPECT_EQ(read->week_programs[0].program, "train-resnet");
  EXPECT_EQ(read->week_programs[0].week, 20452);
  EXPECT_EQ(read->week_programs[1].program, "");
  EXPECT_EQ(read->week_programs[1].served, 3);
  // Without served days (a fleet's, a database just migrated) the JSON is
  // what readers before them read.
  const nlohmann::json none =
      nlohmann::json::parse(ReportDataToJson(AnAggregate()));
  EXPECT_FALSE(none.contains("served_days"));
  EXPECT_FALSE(none.contains("week_programs"));
  EXPECT_TRUE(ReportDataFromJson(none.dump())->served_days.empty());
}

TEST(ReportJsonTest, AFieldItDoesNotKnowIsIgnored) {
  nlohmann::json j = nlohmann::json::parse(ReportDataToJson(AnAggregate()));
  j["added_later"] = {1, 2};
  EXPECT_TRUE(ReportDataFromJson(j.dump()).ok());
}

TEST(ReportJsonTest, TextThatIsNotAVersionOneAggregateIsRefusedSayingWhy) {
  nlohmann::json j = nlohmann::json::parse(ReportDataToJson(AnAggregate()));
  const auto refused = [](const std::string& text) {
    absl::StatusOr<ReportData> read = ReportDataFromJson(text);
    EXPECT_TRUE(absl::IsInvalidArgument(read.status())) << text;
    return std::string(read.status().message());
  };
  EXPECT_THAT(refused("{\"version\": 1, "), HasSubstr("not a JSON object"));
  EXPECT_THAT(refused("[1]"), HasSubstr("not a JSON object"));
  nlohmann::json other = j;
  other["version"] = 2;
  EXPECT_THAT(refused(other.dump()),
              HasSubstr("version 2, this build reads version 1"));
  nlohmann::json missing = j;
  missing.erase("groups");
  EXPECT_THAT(refused(missing.dump()), HasSubstr("groups"));
  nlohmann::json wrong = j;
  wrong["records"] = "three";
  EXPECT_THAT(refused(wrong.dump()), HasSubstr("number"));
}

}  // namespace
}  // namespace tunedb
