// The export format: round trips and table-driven bad lines, each naming
// the offending member.
#include "store/record_json.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/store/store_test_util.h"

namespace tunedb::store_test {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

TEST(RecordJsonTest, RoundTripsEveryField) {
  Record record = TestRecord(12);
  record.served_count = 17;
  record.results[0].launch.median_ms = 0.1 + 0.2;  // not exactly representable
  record.host = "h\xc3\xa9te \"quoted\"\n";
  const std::string line = RecordToJson(record);
  EXPECT_EQ(line.find('\n'), std::string::npos);

  absl::StatusOr<Record> back = RecordFromJson(line);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << line;
  ExpectSameRecord(*back, record);
  EXPECT_EQ(back->served_count, 17);
  EXPECT_EQ(back->id, 0);
  EXPECT_EQ(RecordToJson(*back), line);
}

TEST(RecordJsonTest, RoundTripsAGraphRecordWithItsEngineConfigs) {
  const Record record = GraphTestRecord(5);
  const std::string line = RecordToJson(record);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const Json parsed = Json::parse(line);
  EXPECT_EQ(parsed["results"][0]["engine"]["knobs"], "3=2,17=8589934592");
  EXPECT_EQ(parsed["results"][0]["engine"]["plan"], record.results[0].plan);
  absl::StatusOr<Record> back = RecordFromJson(line);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << line;
  ExpectSameRecord(*back, record);
  // Legacy records carry no engine member.
  EXPECT_EQ(RecordToJson(TestRecord(5)).find("\"engine\""),
            std::string::npos);
}

TEST(RecordJsonTest, RefusesBadEngineKnobsNamingTheMember) {
  Json line = Json::parse(RecordToJson(GraphTestRecord(5)));
  line["results"][0]["engine"]["knobs"] = "3=two";
  absl::StatusOr<Record> back = RecordFromJson(line.dump());
  ASSERT_FALSE(back.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(back.status()));
  EXPECT_THAT(back.status().message(),
              HasSubstr("results[0].engine.knobs"));
}

TEST(RecordJsonTest, RoundTripsANegativeRecord) {
  const Record record = NegativeRecord(3);
  absl::StatusOr<Record> back = RecordFromJson(RecordToJson(record));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_FALSE(back->supported());
  ExpectSameRecord(*back, record);
}

TEST(RecordJsonTest, ARevalidatedRecordKeepsWhereItCameFrom) {
  Record record = TestRecord(2);
  EXPECT_FALSE(Json::parse(RecordToJson(record))
                   .contains("revalidated_from_cudnn"));  // a full search
  record.revalidated_from_cudnn = 91400;
  absl::StatusOr<Record> back = RecordFromJson(RecordToJson(record));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->revalidated_from_cudnn, 91400);
  // From its own version it cannot have been revalidated.
  Json line = Json::parse(RecordToJson(record));
  line["revalidated_from_cudnn"] = record.key.device.cudnn_version;
  back = RecordFromJson(line.dump());
  EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(back.status().message(), HasSubstr("revalidated_from_cudnn"));
}

TEST(RecordJsonTest, ARecordReTimedAfterADriverUpgradeKeepsTheOldDriver) {
  Record record = TestRecord(2);  // driver 580.65.06
  EXPECT_FALSE(Json::parse(RecordToJson(record))
                   .contains("revalidated_from_driver"));  // a full search
  record.revalidated_from_driver = "575.57.08";
  absl::StatusOr<Record> back = RecordFromJson(RecordToJson(record));
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameRecord(*back, record);
  // An export written before the field existed reads as a full search.
  Json older = Json::parse(RecordToJson(record));
  older.erase("revalidated_from_driver");
  back = RecordFromJson(older.dump());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->revalidated_from_driver, "");
  // Only an older driver of the same form can have been re-timed from.
  for (const char* bad :
       {"580.65.06", "590.1", "cuda-driver-api-12.8", "old", "575"}) {
    Json line = Json::parse(RecordToJson(record));
    line["revalidated_from_driver"] = bad;
    back = RecordFromJson(line.dump());
    EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(back.status().message(),
                HasSubstr("revalidated_from_driver:")) << bad;
  }
}

TEST(RecordJsonTest, WritesTheDocumentedLayout) {
  const Json line = Json::parse(RecordToJson(TestRecord(1)));
  EXPECT_EQ(line["format"], "tunedb-record");
  EXPECT_EQ(line["version"], 2);
  EXPECT_EQ(line["timing_version"], kCurrentTimingVersion);
  EXPECT_EQ(line["key"], StemKey(1).ToText());
  EXPECT_EQ(line["results"][0]["launch"]["samples"], 5);
  EXPECT_EQ(line["results"][0]["gpu"]["median_ms"], 0.0625);
  EXPECT_EQ(line["results"][0]["host"]["spread_ms"], 0.001953125);
  EXPECT_EQ(line["results"][0]["math_type"], "tensor_op");
  EXPECT_EQ(line["results"][2]["status"], "not_supported");
  EXPECT_EQ(line["results"][3]["error"],
            "CUDNN_STATUS_EXECUTION_FAILED: \"launch\" failed");
  EXPECT_FALSE(line.contains("id"));
  EXPECT_TRUE(RecordToJson(TestRecord(1)).rfind("{\"format\":", 0) == 0);
}

struct BadLine {
  const char* name;
  // Edits a valid line.
  void (*edit)(Json& line);
  // The member the error must name.
  const char* field;
};

const BadLine kBadLines[] = {
    {"NoFormat", [](Json& j) { j.erase("format"); }, "format"},
    {"WrongFormat", [](Json& j) { j["format"] = "csv"; }, "format"},
    {"NewerVersion", [](Json& j) { j["version"] = 3; }, "version"},
    {"VersionZero", [](Json& j) { j["version"] = 0; }, "version"},
    {"VersionAsText", [](Json& j) { j["version"] = "1"; }, "version"},
    {"NoKey", [](Json& j) { j.erase("key"); }, "key"},
    {"BadKey", [](Json& j) { j["key"] = "kv=1 gpu=x"; }, "key"},
    {"KeyNotText", [](Json& j) { j["key"] = 5; }, "key"},
    {"HugeHost", [](Json& j) { j["host"] = std::string(10 << 20, 'h'); },
     "host"},
    {"LongError",
     [](Json& j) { j["results"][3]["error"] = std::string(5000, 'e'); },
     "results[3].error"},
    {"HugeCountAsFloat", [](Json& j) { j["served_count"] = 1e30; },
     "served_count"},
    {"NegativeTime", [](Json& j) { j["measured_at_us"] = -1; },
     "measured_at_us"},
    {"FractionalTime", [](Json& j) { j["measured_at_us"] = 1.5; },
     "measured_at_us"},
    {"HostNotText", [](Json& j) { j["host"] = 1; }, "host"},
    {"NoGpuUuid", [](Json& j) { j.erase("gpu_uuid"); }, "gpu_uuid"},
    {"NoDriver", [](Json& j) { j.erase("driver_version"); }, "driver_version"},
    {"FinderNull", [](Json& j) { j["finder"] = nullptr; }, "finder"},
    {"RepeatsTooLarge", [](Json& j) { j["repeats"] = 1LL << 40; }, "repeats"},
    {"NegativeCap", [](Json& j) { j["workspace_cap_bytes"] = -5; },
     "workspace_cap_bytes"},
    {"NegativeSearch", [](Json& j) { j["search_ms"] = -0.5; }, "search_ms"},
    {"VerifiedAsNumber", [](Json& j) { j["verified"] = 1; }, "verified"},
    {"NegativeServed", [](Json& j) { j["served_count"] = -2; }, "served_count"},
    {"HugeServed", [](Json& j) { j["served_count"] = 18446744073709551615ULL; },
     "served_count"},
    {"ResultsNotArray", [](Json& j) { j["results"] = Json::object(); },
     "results"},
    {"NoResults", [](Json& j) { j.erase("results"); }, "results"},
    {"ResultNotObject", [](Json& j) { j["results"][1] = 3; }, "results[1]"},
    {"NoAlgo", [](Json& j) { j["results"][0].erase("algo"); },
     "results[0].algo"},
    {"NegativeAlgo", [](Json& j) { j["results"][0]["algo"] = -1; },
     "results[0].algo"},
    {"UnknownMath", [](Json& j) { j["results"][1]["math_type"] = "fast"; },
     "results[1].math_type"},
    {"UnknownStatus", [](Json& j) { j["results"][2]["status"] = "meh"; },
     "results[2].status"},
    {"NegativeMedian",
     [](Json& j) { j["results"][0]["launch"]["median_ms"] = -1.0; },
     "results[0].launch.median_ms"},
    {"MedianAsText", [](Json& j) { j["results"][0]["gpu"]["median_ms"] = "1"; },
     "results[0].gpu.median_ms"},
    {"NoSpread", [](Json& j) { j["results"][3]["host"].erase("spread_ms"); },
     "results[3].host.spread_ms"},
    {"NegativeSamples",
     [](Json& j) { j["results"][0]["launch"]["samples"] = -3; },
     "results[0].launch.samples"},
    {"NoGpuTime", [](Json& j) { j["results"][0].erase("gpu"); },
     "results[0].gpu"},
    {"TimingNotObject", [](Json& j) { j["results"][1]["launch"] = 2.5; },
     "results[1].launch"},
    {"UnknownTimingMember",
     [](Json& j) { j["results"][0]["host"]["p99_ms"] = 1; },
     "results[0].host.p99_ms"},
    {"NoTimingVersion", [](Json& j) { j.erase("timing_version"); },
     "timing_version"},
    {"FutureTimingVersion", [](Json& j) { j["timing_version"] = 3; },
     "timing_version"},
    {"NegativeProvenance", [](Json& j) { j["revalidated_from_cudnn"] = -1; },
     "revalidated_from_cudnn"},
    {"DriverProvenanceNotText",
     [](Json& j) { j["revalidated_from_driver"] = 575; },
     "revalidated_from_driver"},
    {"NegativeWorkspace",
     [](Json& j) { j["results"][1]["workspace_bytes"] = -1; },
     "results[1].workspace_bytes"},
    {"DeterministicAsText",
     [](Json& j) { j["results"][1]["deterministic"] = "yes"; },
     "results[1].deterministic"},
    {"NoRetimed", [](Json& j) { j["results"][0].erase("retimed"); },
     "results[0].retimed"},
    {"ErrorNotText", [](Json& j) { j["results"][3]["error"] = Json::array(); },
     "results[3].error"},
    {"UnknownTopMember", [](Json& j) { j["colour"] = "red"; }, "colour"},
    {"UnknownResultMember", [](Json& j) { j["results"][0]["speed"] = 1; },
     "results[0].speed"},
};

class BadLineTest : public ::testing::TestWithParam<BadLine> {};

TEST_P(BadLineTest, IsRefusedNamingTheField) {
  Json line = Json::parse(RecordToJson(TestRecord(4)));
  GetParam().edit(line);
  absl::StatusOr<Record> record = RecordFromJson(line.dump());
  ASSERT_FALSE(record.ok()) << line.dump();
  EXPECT_EQ(record.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(record.status().message(),
              HasSubstr(std::string(GetParam().field) + ":"));
}

INSTANTIATE_TEST_SUITE_P(Table, BadLineTest, ::testing::ValuesIn(kBadLines),
                         [](const ::testing::TestParamInfo<BadLine>& info) {
                           return std::string(info.param.name);
                         });

TEST(RecordJsonTest, RefusesTextThatIsNotAJsonObject) {
  for (const char* text : {"", "not json", "[1,2]", "{\"format\":", "null"}) {
    absl::StatusOr<Record> record = RecordFromJson(text);
    EXPECT_EQ(record.status().code(), absl::StatusCode::kInvalidArgument)
        << text;
    EXPECT_THAT(record.status().message(), HasSubstr("line:")) << text;
  }
}

TEST(RecordJsonTest, AWholeNumberBeyondRangeIsOutOfRangeNotANonInteger) {
  Json line = Json::parse(RecordToJson(TestRecord(4)));
  line["repeats"] = 1e30;
  absl::StatusOr<Record> record = RecordFromJson(line.dump());
  ASSERT_FALSE(record.ok());
  EXPECT_THAT(record.status().message(),
              HasSubstr("repeats: is out of range (0 to 2147483647)"));
  line["repeats"] = 2.5;
  EXPECT_THAT(RecordFromJson(line.dump()).status().message(),
              HasSubstr("repeats: must be an integer"));
}

// Found by the import_line fuzzer (tests/fuzz/regressions/import_line/): a
// key within the limit as written, with characters its canonical text
// escapes, was imported and then exported as a line over the limit, which
// no import takes. The GPU model, the key's one free text, now has a limit
// of its own (256 bytes, at most 768 escaped), which refuses such a key
// first and keeps every canonical key far below 4096 bytes.
TEST(RecordJsonTest, AKeyOverTheLimitInItsCanonicalTextIsRefused) {
  Record record = TestRecord(4);
  record.key.device.gpu_model = std::string(2000, ',');  // %2C when canonical
  Json line = Json::parse(RecordToJson(record));
  std::string raw = line["key"].get<std::string>();
  const size_t at = raw.find("gpu=") + 4;
  raw.replace(at, raw.find(' ', at) - at, std::string(2000, ','));
  ASSERT_LE(raw.size(), 4096u);
  line["key"] = raw;
  absl::StatusOr<Record> back = RecordFromJson(line.dump());
  ASSERT_FALSE(back.ok());
  EXPECT_THAT(back.status().message(),
              HasSubstr("GPU model of 2000 bytes, at most 256 allowed"));
}

TEST(RecordJsonTest, AcceptsIntegralDurations) {
  Json line = Json::parse(RecordToJson(TestRecord(4)));
  line["results"][1]["launch"]["median_ms"] = 3;
  absl::StatusOr<Record> record = RecordFromJson(line.dump());
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->results[1].launch.median_ms, 3.0);
}

TEST(RecordJsonTest, ReadsVersionOneLinesAsStaleGpuTimes) {
  // A line as the first export format wrote it: one time per result, which
  // was GPU time (CUDA-graph replays).
  Json line = Json::parse(RecordToJson(TestRecord(4)));
  line["version"] = 1;
  line.erase("timing_version");
  for (Json& result : line["results"]) {
    const Json gpu = result["gpu"];
    result.erase("launch");
    result.erase("gpu");
    result.erase("host");
    result["median_ms"] = gpu["median_ms"];
    result["spread_ms"] = gpu["spread_ms"];
    result["samples"] = gpu["samples"];
  }
  absl::StatusOr<Record> record = RecordFromJson(line.dump());
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_TRUE(record->stale());
  const Record fresh = TestRecord(4);
  ASSERT_EQ(record->results.size(), fresh.results.size());
  for (size_t i = 0; i < fresh.results.size(); ++i) {
    EXPECT_EQ(record->results[i].gpu, fresh.results[i].gpu) << i;
    EXPECT_FALSE(record->results[i].launch.measured()) << i;
  }
}

}  // namespace
}  // namespace tunedb::store_test
