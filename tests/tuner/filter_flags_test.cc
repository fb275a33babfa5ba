// Filters from flags: fields, shortcuts, time bounds, and errors.
#include "tuner/filter_flags.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunedb::tuner {
namespace {

using ::testing::HasSubstr;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

TEST(FilterFlagsTest, FieldsAndShortcuts) {
  FilterFlags f;
  f.filters = {"n=64", "c=3"};
  f.gpu = "NVIDIA H200";
  f.op = "bwd_data";
  f.dtype = "fp16";
  f.layout = "NHWC";
  auto filter = BuildFilter(f, {"k=64"}, kNow);
  ASSERT_TRUE(filter.ok()) << filter.status();
  const auto& m = filter->fields();
  EXPECT_EQ(m.at("n"), "64");
  EXPECT_EQ(m.at("c"), "3");
  EXPECT_EQ(m.at("k"), "64");
  EXPECT_EQ(m.at("gpu"), "NVIDIA H200");
  EXPECT_EQ(m.at("op"), "bwd_data");
  EXPECT_EQ(m.at("in_type"), "f16");
  EXPECT_EQ(m.at("layout"), "nhwc");
  EXPECT_EQ(m.count("tf32"), 0u);
}

TEST(FilterFlagsTest, HashSelectsByKeyHashAsTheProtoDocuments) {
  FilterFlags f;
  f.filters = {"hash=723440f9bbdc8824"};
  auto filter = BuildFilter(f, {}, kNow);
  ASSERT_TRUE(filter.ok()) << filter.status();
  EXPECT_EQ(filter->fields().at("hash"), "723440f9bbdc8824");
  for (const char* bad :
       {"hash=723440f9", "hash=723440F9BBDC8824", "hash=723440f9bbdc882g"}) {
    f.filters = {bad};
    auto refused = BuildFilter(f, {}, kNow);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
    EXPECT_THAT(refused.status().message(), HasSubstr("not a key hash"));
  }
}

TEST(FilterFlagsTest, Fp32VariantsSetTf32) {
  FilterFlags f;
  f.dtype = "fp32-no-tf32";
  auto filter = BuildFilter(f, {}, kNow);
  ASSERT_TRUE(filter.ok());
  EXPECT_EQ(filter->fields().at("tf32"), "0");
}

TEST(FilterFlagsTest, Errors) {
  FilterFlags f;
  f.filters = {"colour=red"};
  EXPECT_THAT(std::string(BuildFilter(f, {}, kNow).status().message()),
              HasSubstr("unknown key field 'colour'"));
  f.filters = {"n64"};
  EXPECT_THAT(std::string(BuildFilter(f, {}, kNow).status().message()),
              HasSubstr("expected field=value"));
  f.filters = {"op=fwd"};
  f.op = "bwd_data";
  EXPECT_THAT(std::string(BuildFilter(f, {}, kNow).status().message()),
              HasSubstr("given twice"));
  FilterFlags g;
  g.since = "yesterday";
  EXPECT_THAT(std::string(BuildFilter(g, {}, kNow).status().message()),
              HasSubstr("--since"));
}

TEST(FilterFlagsTest, TimeBounds) {
  EXPECT_EQ(*ParseTimeBound("24h", kNow), kNow - absl::Hours(24));
  EXPECT_EQ(*ParseTimeBound("7d", kNow), kNow - absl::Hours(24 * 7));
  EXPECT_EQ(*ParseTimeBound("2026-11-29", kNow),
            absl::FromCivil(absl::CivilDay(2026, 11, 29), absl::UTCTimeZone()));
  EXPECT_EQ(*ParseTimeBound("2026-11-29T12:00:00Z", kNow),
            absl::FromCivil(absl::CivilSecond(2026, 11, 29, 12, 0, 0),
                            absl::UTCTimeZone()));
  FilterFlags f;
  f.since = "1h";
  f.until = "2026-11-29";
  auto filter = BuildFilter(f, {}, kNow);
  ASSERT_TRUE(filter.ok());
  EXPECT_EQ(filter->since_us(), absl::ToUnixMicros(kNow - absl::Hours(1)));
  EXPECT_NE(filter->until_us(), 0);
}

}  // namespace
}  // namespace tunedb::tuner
