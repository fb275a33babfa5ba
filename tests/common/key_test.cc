// Problem key: canonical text round trips, hashing and validation.
#include <string>

#include "common/key_fields.h"
#include "gtest/gtest.h"
#include "tests/testing/test_values.h"
#include "tunedb/problem.h"

namespace tunedb {
namespace {

constexpr char kResNetStem[] =
    "kv=1 gpu=NVIDIA%20H200 cc=9.0 sms=132 cudnn=9.19.0 cuda=13.0 op=fwd "
    "n=64 c=3 k=64 in=224x224 filt=7x7 pad=3x3 stride=2x2 dil=1x1 groups=1 "
    "mode=xcorr in_type=f32 out_type=f32 compute=f32 layout=nchw tc=1 tf32=1";

ProblemKey Stem() { return testing_util::StemKey(64, "NVIDIA H200"); }

TEST(KeyTest, CanonicalTextIsStable) {
  EXPECT_EQ(Stem().ToText(), kResNetStem);
}

TEST(KeyTest, ParseIsExactInverse) {
  auto parsed = ProblemKey::Parse(kResNetStem);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, Stem());
  EXPECT_EQ(parsed->ToText(), kResNetStem);
}

TEST(KeyTest, OutputSize) {
  EXPECT_EQ(Stem().problem.OutputSize(0), 112);
  EXPECT_EQ(Stem().problem.OutputElements(), int64_t{64} * 64 * 112 * 112);
}

// Many variants, each must survive text -> parse -> text.
TEST(KeyTest, RoundTripsAcrossTheProblemSpace) {
  int checked = 0;
  for (ConvOp op :
       {ConvOp::kForward, ConvOp::kBackwardData, ConvOp::kBackwardFilter}) {
    for (DataType t : {DataType::kFloat, DataType::kHalf, DataType::kBFloat16,
                       DataType::kDouble}) {
      for (int dims : {2, 3}) {
        for (bool nhwc : {false, true}) {
          ProblemKey key = Stem();
          key.device.gpu_model = "Weird GPU=%x (MIG 1g.10gb)";
          ConvProblem& p = key.problem;
          p.op = op;
          p.input_type = p.output_type = t;
          p.compute_type =
              t == DataType::kDouble ? DataType::kDouble : DataType::kFloat;
          p.allow_tf32 = t == DataType::kFloat;
          p.spatial_dims = dims;
          p.c = 32;
          p.k = 64;
          p.groups = 8;
          p.input = {17, 19, dims == 3 ? 5 : 0};
          p.filter = {3, 5, dims == 3 ? 3 : 0};
          p.padding = {1, 2, dims == 3 ? 1 : 0};
          p.stride = {2, 1, dims == 3 ? 1 : 0};
          p.dilation = {1, 2, dims == 3 ? 1 : 0};
          p.layout = dims == 2 ? (nhwc ? Layout::kNHWC : Layout::kNCHW)
                               : (nhwc ? Layout::kNDHWC : Layout::kNCDHW);
          ASSERT_TRUE(key.Validate().ok()) << key.Validate() << key.ToText();
          auto parsed = ProblemKey::Parse(key.ToText());
          ASSERT_TRUE(parsed.ok()) << parsed.status() << "\n" << key.ToText();
          EXPECT_EQ(*parsed, key);
          EXPECT_EQ(parsed->Hash(), key.Hash());
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 3 * 4 * 2 * 2);
}

TEST(KeyTest, HashDiffersWhenAnyFieldDiffers) {
  ProblemKey a = Stem();
  ProblemKey b = Stem();
  b.device.cudnn_version = 91400;
  EXPECT_NE(a.Hash(), b.Hash());
  b = Stem();
  b.problem.allow_tf32 = false;
  EXPECT_NE(a.Hash(), b.Hash());
  EXPECT_EQ(a.HashText().size(), 16u);
}

TEST(KeyTest, KeyFieldsUnescapesValues) {
  ProblemKey graph = Stem();
  graph.problem.api = ConvApi::kGraph;
  graph.problem.alignment = 16;
  auto fields = KeyFields(graph.ToText());
  ASSERT_TRUE(fields.ok());
  EXPECT_EQ(fields->at("gpu"), "NVIDIA H200");
  EXPECT_EQ(fields->at("op"), "fwd");
  EXPECT_EQ(fields->size(), KeyFieldNames().size());
  for (auto name : KeyFieldNames()) {
    EXPECT_EQ(fields->count(std::string(name)), 1u) << name;
  }
}

TEST(KeyTest, LegacyKeysHaveNoApiFieldSoStoredHashesStay) {
  EXPECT_EQ(Stem().ToText().find("api="), std::string::npos);
  auto explicit_legacy =
      ProblemKey::Parse(std::string(kResNetStem) + " api=legacy");
  ASSERT_TRUE(explicit_legacy.ok()) << explicit_legacy.status();
  EXPECT_EQ(*explicit_legacy, Stem());
  EXPECT_EQ(explicit_legacy->ToText(), kResNetStem);
}

TEST(KeyTest, GraphKeysCarryApiAndAlignmentAndRoundTrip) {
  ProblemKey graph = Stem();
  graph.problem.api = ConvApi::kGraph;
  graph.problem.alignment = 16;
  const std::string text = graph.ToText();
  EXPECT_EQ(text, std::string(kResNetStem) + " api=graph align=16");
  auto parsed = ProblemKey::Parse(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, graph);
  EXPECT_NE(graph.Hash(), Stem().Hash());
  ProblemKey aligned8 = graph;
  aligned8.problem.alignment = 8;
  EXPECT_NE(aligned8.Hash(), graph.Hash());
}

TEST(KeyTest, GraphAlignmentMustBeAPowerOfTwoFromTheElementSize) {
  ProblemKey graph = Stem();
  graph.problem.api = ConvApi::kGraph;
  for (int bad : {0, 2, 3, 12, 32}) {  // f32: 4 to 16
    graph.problem.alignment = bad;
    EXPECT_TRUE(absl::IsInvalidArgument(graph.Validate())) << bad;
  }
  for (int good : {4, 8, 16}) {
    graph.problem.alignment = good;
    EXPECT_TRUE(graph.Validate().ok()) << good;
  }
  ProblemKey legacy = Stem();
  legacy.problem.alignment = 16;
  EXPECT_TRUE(absl::IsInvalidArgument(legacy.Validate()));
  EXPECT_FALSE(
      ProblemKey::Parse(std::string(kResNetStem) + " api=graph").ok());
  EXPECT_FALSE(
      ProblemKey::Parse(std::string(kResNetStem) + " align=16").ok());
}

TEST(KeyTest, AlignmentClassIsTheLargestCommonPowerOfTwo) {
  alignas(64) static char buffer[64];
  EXPECT_EQ(AlignmentClass({buffer}), 16);
  EXPECT_EQ(AlignmentClass({buffer, buffer + 8}), 8);
  EXPECT_EQ(AlignmentClass({buffer + 2, buffer + 32}), 2);
  EXPECT_EQ(AlignmentClass({buffer + 1}), 1);
}

struct BadText {
  const char* name;
  std::string from;  // substring of kResNetStem to replace
  std::string to;
  std::string field;  // the error must name this field
};

class BadKeyTextTest : public testing::TestWithParam<BadText> {};

TEST_P(BadKeyTextTest, RejectedNamingTheField) {
  std::string text = kResNetStem;
  const BadText& bad = GetParam();
  size_t at = text.find(bad.from);
  ASSERT_NE(at, std::string::npos) << bad.from;
  text.replace(at, bad.from.size(), bad.to);
  auto parsed = ProblemKey::Parse(text);
  ASSERT_FALSE(parsed.ok()) << text;
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.status().message().find(bad.field), absl::string_view::npos)
      << parsed.status();
}

INSTANTIATE_TEST_SUITE_P(
    Table, BadKeyTextTest,
    testing::Values(
        BadText{"ZeroBatch", "n=64", "n=0", "n"},
        BadText{"NegativeChannels", "c=3", "c=-3", "c"},
        BadText{"ZeroK", "k=64", "k=0", "k"},
        BadText{"ZeroInput", "in=224x224", "in=0x224", "in"},
        BadText{"ZeroFilter", "filt=7x7", "filt=7x0", "filt"},
        BadText{"NegativePad", "pad=3x3", "pad=-1x3", "pad"},
        BadText{"ZeroStride", "stride=2x2", "stride=0x2", "stride"},
        BadText{"ZeroDilation", "dil=1x1", "dil=0x1", "dil"},
        BadText{"OutputBelowOne", "filt=7x7", "filt=299x7", "output size"},
        BadText{"GroupsNotDividingC", "groups=1", "groups=2", "groups"},
        BadText{"GroupsZero", "groups=1", "groups=0", "groups"},
        BadText{"RankMismatch", "pad=3x3", "pad=3x3x3", "pad"},
        BadText{"FourDims", "in=224x224", "in=1x2x3x4", "in"},
        BadText{"UnknownType", "in_type=f32", "in_type=f8", "data type"},
        BadText{"MixedTypes", "out_type=f32", "out_type=f16", "out_type"},
        BadText{"UnknownLayout", "layout=nchw", "layout=chwn", "layout"},
        BadText{"LayoutRank", "layout=nchw", "layout=ncdhw", "layout"},
        BadText{"UnknownOp", "op=fwd", "op=sideways", "op"},
        BadText{"UnknownMode", "mode=xcorr", "mode=fft", "mode"},
        BadText{"BadBool", "tc=1", "tc=yes", "tc"},
        BadText{"Tf32WithoutTensorCores", "tc=1", "tc=0", "tf32"},
        BadText{"NotANumber", "n=64", "n=sixty",
                "n: 'sixty' is not an integer"},
        BadText{"Int64Overflow", "n=64", "n=99999999999999999999",
                "n: '99999999999999999999' is out of range"},
        BadText{"Exponent", "n=64", "n=1e30", "n: '1e30' is not an integer"},
        BadText{"HugeDim", "n=64", "n=99999999999", "n"},
        BadText{"ElementOverflow", "in=224x224", "in=2147483647x2147483647",
                "in"},
        BadText{"MissingField", " groups=1", "", "groups"},
        BadText{"UnknownField", "tf32=1", "tf32=1 color=red", "color"},
        BadText{"RepeatedField", "n=64", "n=64 n=64", "n"},
        BadText{"OldKeyVersion", "kv=1", "kv=0", "kv"},
        BadText{"BadEscape", "NVIDIA%20H200", "NVIDIA%2", "escape"},
        BadText{"BadCc", "cc=9.0", "cc=nine", "cc"},
        BadText{"BadCudnn", "cudnn=9.19.0", "cudnn=9.19", "cudnn"},
        BadText{"EmptyGpu", "gpu=NVIDIA%20H200", "gpu=", "gpu"},
        BadText{"ZeroSms", "sms=132", "sms=0", "sms"},
        BadText{"MalformedToken", "n=64", "n64", "n64"}),
    [](const testing::TestParamInfo<BadText>& info) {
      return info.param.name;
    });

TEST(KeyTest, Fp16WithTf32IsRejected) {
  ProblemKey key = Stem();
  key.problem.input_type = key.problem.output_type = DataType::kHalf;
  key.problem.allow_tf32 = true;
  absl::Status s = key.Validate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("tf32"), absl::string_view::npos);
  key.problem.allow_tf32 = false;
  EXPECT_TRUE(key.Validate().ok());
}

TEST(KeyTest, ProblemAndDeviceParseAlone) {
  ProblemKey key = Stem();
  auto p = ConvProblem::Parse(key.problem.ToText());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p, key.problem);
  auto d = DeviceKey::Parse(key.device.ToText());
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, key.device);
  EXPECT_EQ(CudnnVersionText(91400), "9.14.0");
  EXPECT_EQ(CudaVersionText(12080), "12.8");
}

// tests/fuzz/regressions/key_text/: a major version whose encoding does not
// fit in an int overflowed (undefined behaviour) instead of being refused.
TEST(KeyTest, VersionsTooLargeToEncodeAreRejectedAsOutOfRange) {
  for (const char* text :
       {"gpu=A cc=9.0 sms=132 cudnn=999999.0.0 cuda=13.0",
        "gpu=A cc=9.0 sms=132 cudnn=214748.36.48 cuda=13.0",
        "gpu=A cc=9.0 sms=132 cudnn=9.19.0 cuda=9999999.0",
        "gpu=A cc=9.0 sms=132 cudnn=9.19.0 cuda=2147483.65"}) {
    absl::StatusOr<DeviceKey> d = DeviceKey::Parse(text);
    ASSERT_FALSE(d.ok()) << text;
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(d.status().message().find("out of range"),
              absl::string_view::npos)
        << d.status();
  }
  // The largest encodable ones still parse.
  absl::StatusOr<DeviceKey> d = DeviceKey::Parse(
      "gpu=A cc=9.0 sms=132 cudnn=214748.36.47 cuda=2147483.64");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->cudnn_version, 2147483647);
  EXPECT_EQ(d->cuda_runtime_version, 2147483640);
}

}  // namespace
}  // namespace tunedb
