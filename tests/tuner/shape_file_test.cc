// Shape files: the three formats, defaults, and errors naming line and field.
#include "tuner/shape_file.h"

#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_values.h"

namespace tunedb::tuner {
namespace {

using ::testing::HasSubstr;

ShapeFileResult Parse(const std::string& name, const std::string& text,
                      ProblemOptions defaults = {}) {
  std::istringstream in(text);
  return ParseShapeFile(name, in, ShapeFormat::kAuto, defaults);
}

TEST(ShapeFileTest, JsonLinesWithDefaults) {
  ProblemOptions d;
  d.batch = 16;
  d.ops = {ConvOp::kForward};
  ShapeFileResult r = Parse(
      "s.jsonl",
      "# comment\n"
      "{\"c\": 64, \"k\": 128, \"in\": [56, 56], \"filt\": 3, \"pad\": 1}\n"
      "\n"
      "{\"n\": 8, \"c\": 32, \"k\": 32, \"in\": [16, 16, 16], "
      "\"filt\": [3, 3, 3], \"ops\": [\"fwd\", \"bwd_filter\"], "
      "\"dtype\": \"bf16\", \"layout\": \"ndhwc\"}\n",
      d);
  ASSERT_TRUE(r.errors.empty()) << r.errors[0];
  ASSERT_EQ(r.entries.size(), 3u);
  const ConvProblem& a = r.entries[0].problem;
  EXPECT_EQ(a.n, 16);
  EXPECT_EQ(a.padding[1], 1);
  EXPECT_EQ(a.stride[0], 1);
  EXPECT_EQ(a.op, ConvOp::kForward);
  EXPECT_EQ(r.entries[0].source, "s.jsonl:2");
  const ConvProblem& b = r.entries[2].problem;
  EXPECT_EQ(b.spatial_dims, 3);
  EXPECT_EQ(b.input_type, DataType::kBFloat16);
  EXPECT_EQ(b.layout, Layout::kNDHWC);
  EXPECT_EQ(b.op, ConvOp::kBackwardFilter);
  EXPECT_EQ(r.entries[2].source, "s.jsonl:4");
}

TEST(ShapeFileTest, CsvWithHeader) {
  ShapeFileResult r = Parse("s.csv",
                            "n,c,k,in,filt,stride,pad,groups,ops\n"
                            "32,64,64,56x56,3x3,1,1,64,fwd;bwd_data\n"
                            "32,3,64,224,7,2,3,,fwd\n");
  ASSERT_TRUE(r.errors.empty()) << r.errors[0];
  ASSERT_EQ(r.entries.size(), 3u);
  EXPECT_EQ(r.entries[0].problem.groups, 64);
  EXPECT_EQ(r.entries[1].problem.op, ConvOp::kBackwardData);
  EXPECT_EQ(r.entries[2].problem.stride[1], 2);
  EXPECT_EQ(r.entries[2].problem.groups, 1);
  EXPECT_EQ(r.entries[2].source, "s.csv:3");
}

TEST(ShapeFileTest, KeyTextLines) {
  const ConvProblem p = testing_util::TestProblem(4, 8, 16, /*hw=*/10);
  ProblemKey key{testing_util::TestDevice("NVIDIA H200"), p};
  key.problem.op = ConvOp::kBackwardFilter;
  ShapeFileResult r = Parse("keys", p.ToText() + "\n" + key.ToText() + "\n");
  ASSERT_TRUE(r.errors.empty()) << r.errors[0];
  ASSERT_EQ(r.entries.size(), 2u);
  EXPECT_EQ(r.entries[0].problem, p);
  EXPECT_FALSE(r.entries[0].device.has_value());
  EXPECT_EQ(r.entries[1].problem, key.problem);
  ASSERT_TRUE(r.entries[1].device.has_value());
  EXPECT_EQ(*r.entries[1].device, key.device);
}

TEST(ShapeFileTest, ErrorsNameLineAndField) {
  ShapeFileResult r = Parse(
      "bad.jsonl",
      "{\"c\": 64, \"k\": 64, \"in\": [56, 56], \"filt\": 3}\n"
      "{\"c\": 64, \"k\": 64, \"in\": [56, 56], \"filt\": 3, \"stride\": [1, "
      "1, 1]}\n"
      "{\"c\": 64, \"k\": 64, \"in\": [56, 56]}\n"
      "{\"c\": 64, \"k\": 64, \"in\": [56, 56], \"filt\": 3, \"strde\": 2}\n"
      "{\"c\": \"many\", \"k\": 64, \"in\": [56, 56], \"filt\": 3}\n"
      "{\"c\": 64, \"k\": 64, \"in\": [56, 56], \"filt\": 3, \"dtype\": "
      "\"int8\"}\n"
      "{\"c\": 64, \"k\": 60, \"in\": [56, 56], \"filt\": 3, \"groups\": 8}\n"
      "{not json\n");
  ASSERT_EQ(r.errors.size(), 7u);
  EXPECT_THAT(r.errors[0], HasSubstr("bad.jsonl:2: field 'stride'"));
  EXPECT_THAT(r.errors[1], HasSubstr("bad.jsonl:3: field 'filt': is required"));
  EXPECT_THAT(r.errors[2],
              HasSubstr("bad.jsonl:4: field 'strde': unknown field"));
  EXPECT_THAT(r.errors[3], HasSubstr("bad.jsonl:5: field 'c'"));
  EXPECT_THAT(r.errors[4], HasSubstr("bad.jsonl:6: field 'dtype'"));
  EXPECT_THAT(r.errors[5], HasSubstr("bad.jsonl:7: field 'groups'"));
  EXPECT_THAT(r.errors[6], HasSubstr("bad.jsonl:8: not valid JSON"));
}

TEST(ShapeFileTest, CsvErrors) {
  ShapeFileResult r = Parse("bad.csv",
                            "c,k,in,filt\n"
                            "64,64,56x56\n"
                            "64,64,56x56x56x56,3\n"
                            "64,0,56,3\n");
  ASSERT_EQ(r.errors.size(), 3u);
  EXPECT_THAT(r.errors[0], HasSubstr("bad.csv:2: expected 4 cells"));
  EXPECT_THAT(r.errors[1], HasSubstr("bad.csv:3: field 'in'"));
  EXPECT_THAT(r.errors[2], HasSubstr("bad.csv:4: field 'k': must be >= 1"));

  ShapeFileResult header = Parse("h.csv", "c,k,size,filt\n1,2,3,4\n");
  ASSERT_EQ(header.errors.size(), 1u);
  EXPECT_THAT(header.errors[0],
              HasSubstr("h.csv:1: field 'size': unknown column"));
}

TEST(ShapeFileTest, KeyTextErrorsNameTheField) {
  ShapeFileResult r = Parse("k.txt", "op=fwd n=1 c=1\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_THAT(r.errors[0], HasSubstr("k.txt:1: "));
  EXPECT_THAT(r.errors[0], HasSubstr("field '"));
}

TEST(ShapeFileTest, FormatNames) {
  EXPECT_EQ(*ParseShapeFormat("jsonl"), ShapeFormat::kJsonLines);
  EXPECT_EQ(*ParseShapeFormat("CSV"), ShapeFormat::kCsv);
  EXPECT_EQ(*ParseShapeFormat("text"), ShapeFormat::kKeyText);
  EXPECT_FALSE(ParseShapeFormat("yaml").ok());
}

}  // namespace
}  // namespace tunedb::tuner
