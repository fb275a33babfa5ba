// Expansion of layers into cuDNN problems: passes, first-layer rule,
// transposed convolutions, dtype presets and layouts.
#include "tuner/training_problems.h"

#include <set>

#include "gtest/gtest.h"
#include "tuner/models.h"

namespace tunedb::tuner {
namespace {

std::vector<PlannedProblem> Expand(const std::string& model,
                                   ProblemOptions options = {}) {
  auto info = FindModel(model);
  EXPECT_TRUE(info.ok());
  auto built = BuildModel(**info, {});
  EXPECT_TRUE(built.ok());
  return LayerProblems(built->layers, (*info)->spatial_dims, options, model);
}

TEST(TrainingProblemsTest, TrainingSkipsBackwardDataOfTheFirstConv) {
  std::vector<PlannedProblem> problems = Expand("resnet50");
  // 53 layers x 3 passes, minus conv1's backward-data.
  EXPECT_EQ(problems.size(), 53u * 3 - 1);
  for (const PlannedProblem& p : problems) {
    if (p.problem.c == 3) {
      EXPECT_NE(p.problem.op, ConvOp::kBackwardData) << p.source;
    }
    EXPECT_TRUE(p.problem.Validate().ok())
        << p.source << ": " << p.problem.Validate();
  }
  std::set<std::string> unique;
  for (const PlannedProblem& p : problems) unique.insert(p.problem.ToText());
  EXPECT_LT(unique.size(), problems.size());  // repeated blocks deduplicate
}

TEST(TrainingProblemsTest, ForwardOnly) {
  ProblemOptions o;
  o.ops = {ConvOp::kForward};
  EXPECT_EQ(Expand("vgg16", o).size(), 13u);
}

TEST(TrainingProblemsTest, TransposedConvMapsToBackwardData) {
  ProblemOptions o;
  o.ops = {ConvOp::kForward};
  int bwd_data = 0;
  for (const PlannedProblem& p : Expand("unet", o)) {
    if (p.problem.op == ConvOp::kBackwardData) {
      ++bwd_data;
      // up4.upconv: 1024 channels at 28x28 -> 512 at 56x56; the equivalent
      // convolution reads 512 channels at 56x56 and writes 1024.
      if (p.source == "unet/up4.upconv fwd") {
        EXPECT_EQ(p.problem.c, 512);
        EXPECT_EQ(p.problem.k, 1024);
        EXPECT_EQ(p.problem.input[0], 56);
        EXPECT_EQ(p.problem.OutputSize(0), 28);
      }
    }
  }
  EXPECT_EQ(bwd_data, 4);
}

TEST(TrainingProblemsTest, DtypesAndLayouts) {
  ProblemOptions o;
  o.dtype = DtypePreset::kFp16;
  o.channels_last = true;
  o.batch = 64;
  for (const PlannedProblem& p : Expand("mobilenetv2", o)) {
    EXPECT_EQ(p.problem.input_type, DataType::kHalf);
    EXPECT_EQ(p.problem.compute_type, DataType::kFloat);
    EXPECT_FALSE(p.problem.allow_tf32);
    EXPECT_EQ(p.problem.layout, Layout::kNHWC);
    EXPECT_EQ(p.problem.n, 64);
    EXPECT_TRUE(p.problem.Validate().ok()) << p.problem.Validate();
  }
  for (const PlannedProblem& p : Expand("unet3d", o)) {
    EXPECT_EQ(p.problem.layout, Layout::kNDHWC);
    EXPECT_EQ(p.problem.spatial_dims, 3);
    EXPECT_TRUE(p.problem.Validate().ok()) << p.problem.Validate();
  }
}

TEST(TrainingProblemsTest, EveryModelYieldsValidProblems) {
  for (const ModelInfo& m : Models()) {
    for (DtypePreset dtype : {DtypePreset::kFp32, DtypePreset::kFp32NoTf32,
                              DtypePreset::kFp16, DtypePreset::kBf16}) {
      for (bool channels_last : {false, true}) {
        ProblemOptions o;
        o.dtype = dtype;
        o.channels_last = channels_last;
        for (const PlannedProblem& p : Expand(m.name, o)) {
          ASSERT_TRUE(p.problem.Validate().ok())
              << p.source << ": " << p.problem.Validate();
        }
      }
    }
  }
}

TEST(TrainingProblemsTest, DtypePresetNames) {
  EXPECT_EQ(*ParseDtypePreset("fp32"), DtypePreset::kFp32);
  EXPECT_EQ(*ParseDtypePreset("FP32_no_tf32"), DtypePreset::kFp32NoTf32);
  EXPECT_EQ(*ParseDtypePreset("half"), DtypePreset::kFp16);
  EXPECT_EQ(*ParseDtypePreset("bfloat16"), DtypePreset::kBf16);
  EXPECT_FALSE(ParseDtypePreset("int8").ok());
  ConvProblem p;
  ApplyDtypePreset(DtypePreset::kFp32NoTf32, p);
  EXPECT_FALSE(p.allow_tf32);
  EXPECT_EQ(p.input_type, DataType::kFloat);
}

TEST(TrainingProblemsTest, OpsParsing) {
  EXPECT_EQ(ParseOps("fwd")->size(), 1u);
  EXPECT_EQ(ParseOps("all")->size(), 3u);
  EXPECT_EQ(*ParseOps("bwd_filter,fwd"),
            (std::vector<ConvOp>{ConvOp::kBackwardFilter, ConvOp::kForward}));
  auto bad = ParseOps("fwd,backward");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("backward"), std::string::npos);
}

}  // namespace
}  // namespace tunedb::tuner
