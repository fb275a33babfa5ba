// MakeConvProblem: plain numbers to a ConvProblem, no CUDA needed.
#include "tunedb/conv_shape.h"

#include <gtest/gtest.h>

namespace tunedb {
namespace {

TEST(ConvShapeTest, TwoDimensionalDefaults) {
  ConvShape s;
  s.n = 64;
  s.c = 3;
  s.k = 64;
  s.input = {224, 224};
  s.filter = {7, 7};
  s.padding = {3, 3};
  s.stride = {2, 2};
  absl::StatusOr<ConvProblem> p = MakeConvProblem(s);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->spatial_dims, 2);
  EXPECT_EQ(p->layout, Layout::kNCHW);
  EXPECT_EQ(p->dilation[0], 1);
  EXPECT_EQ(p->dilation[2], 0);
  EXPECT_EQ(p->OutputSize(0), 112);
  EXPECT_TRUE(p->allow_tf32);
  EXPECT_EQ(p->ToText(),
            "op=fwd n=64 c=3 k=64 in=224x224 filt=7x7 pad=3x3 stride=2x2 "
            "dil=1x1 groups=1 mode=xcorr in_type=f32 out_type=f32 "
            "compute=f32 layout=nchw tc=1 tf32=1");
}

TEST(ConvShapeTest, ThreeDimensionalHalfChannelsLast) {
  ConvShape s;
  s.op = ConvOp::kBackwardFilter;
  s.n = 2;
  s.c = 32;
  s.k = 32;
  s.groups = 32;
  s.input = {8, 16, 16};
  s.filter = {3, 3, 3};
  s.padding = {1, 1, 1};
  s.data_type = DataType::kHalf;
  s.channels_last = true;
  absl::StatusOr<ConvProblem> p = MakeConvProblem(s);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->layout, Layout::kNDHWC);
  EXPECT_EQ(p->op, ConvOp::kBackwardFilter);
  EXPECT_FALSE(p->allow_tf32) << "TF32 applies to fp32 only";
  EXPECT_EQ(p->output_type, DataType::kHalf);
}

TEST(ConvShapeTest, RejectsInconsistentShapes) {
  ConvShape s;
  s.input = {8};
  s.filter = {3};
  EXPECT_FALSE(MakeConvProblem(s).ok());
  s.input = {8, 8};
  s.filter = {3, 3, 3};
  EXPECT_FALSE(MakeConvProblem(s).ok());
  s.filter = {3, 3};
  s.stride = {1};
  EXPECT_FALSE(MakeConvProblem(s).ok());
  s.stride = {};
  s.c = 6;
  s.groups = 4;
  EXPECT_FALSE(MakeConvProblem(s).ok());
  s.groups = 3;
  s.k = 3;
  EXPECT_TRUE(MakeConvProblem(s).ok());
}

}  // namespace
}  // namespace tunedb
