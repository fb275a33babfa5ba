// The CPU reference of the three convolution passes, without a GPU: tiny
// problems whose outputs are worked out by hand (NCHW and NHWC, padding,
// stride, dilation, groups, convolution mode), then identities that tie the
// passes and the layouts together on random data.
#include "cudnn/cpu_reference.h"

#include <cmath>
#include <cstdint>
#include <ostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cudnn/conv_operands.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tunedb/problem.h"

namespace tunedb {

// gtest prints parameters with this (found by argument-dependent lookup).
void PrintTo(Layout layout, std::ostream* os) { *os << LayoutName(layout); }

namespace {

using ::testing::ElementsAreArray;

// An f32 problem: spatial sizes of input and filter per dimension, with the
// same padding, stride and dilation in every dimension.
ConvProblem Problem(ConvOp op, Layout layout, int64_t c, int64_t k,
                    std::vector<int64_t> input, std::vector<int64_t> filter,
                    int64_t pad = 0, int64_t stride = 1, int64_t dil = 1,
                    int64_t groups = 1) {
  ConvProblem p;
  p.op = op;
  p.layout = layout;
  p.spatial_dims = static_cast<int>(input.size());
  p.n = 1;
  p.c = c;
  p.k = k;
  for (int i = 0; i < p.spatial_dims; ++i) {
    p.input[i] = input[i];
    p.filter[i] = filter[i];
    p.padding[i] = pad;
    p.stride[i] = stride;
    p.dilation[i] = dil;
  }
  p.groups = groups;
  p.allow_tf32 = false;
  return p;
}

std::vector<float> Compute(const ConvProblem& p, const std::vector<float>& x,
                           const std::vector<float>& w,
                           const std::vector<float>& y) {
  absl::StatusOr<std::vector<float>> out = CpuConvolution(p, x, w, y);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<float>{};
}

// A 3x3 image 1..9 and a 2x2 filter 1..4, one channel each.
const std::vector<float> kImage = {1, 2, 3, 4, 5, 6, 7, 8, 9};
const std::vector<float> kFilter = {1, 2, 3, 4};

TEST(CpuConvolutionTest, ForwardCrossCorrelatesWithoutFlippingTheFilter) {
  const ConvProblem p =
      Problem(ConvOp::kForward, Layout::kNCHW, 1, 1, {3, 3}, {2, 2});
  // y[i][j] = x[i][j] + 2 x[i][j+1] + 3 x[i+1][j] + 4 x[i+1][j+1].
  EXPECT_THAT(Compute(p, kImage, kFilter, {}),
              ElementsAreArray({37.0f, 47.0f, 67.0f, 77.0f}));
  EXPECT_EQ(ConvMultiplyAccumulates(p), 16);
}

TEST(CpuConvolutionTest, ConvolutionModeFlipsTheFilter) {
  ConvProblem p =
      Problem(ConvOp::kForward, Layout::kNCHW, 1, 1, {3, 3}, {2, 2});
  p.mode = ConvMode::kConvolution;
  // As cross-correlation with the filter {4, 3, 2, 1}.
  EXPECT_THAT(Compute(p, kImage, kFilter, {}),
              ElementsAreArray({23.0f, 33.0f, 53.0f, 63.0f}));
}

TEST(CpuConvolutionTest, ForwardPaddingAndStrideSkipTheBorder) {
  const ConvProblem p = Problem(ConvOp::kForward, Layout::kNCHW, 1, 1, {3, 3},
                                {2, 2}, /*pad=*/1, /*stride=*/2);
  // Output 2x2 at input rows/columns {-1, 1}: y00 sees only x00 (under
  // w11), y01 the top row x01, x02 (under w10, w11), and so on.
  EXPECT_THAT(Compute(p, kImage, kFilter, {}),
              ElementsAreArray({4.0f, 18.0f, 36.0f, 77.0f}));
}

TEST(CpuConvolutionTest, ForwardDilationSpreadsTheFilter) {
  const ConvProblem p = Problem(ConvOp::kForward, Layout::kNCHW, 1, 1, {3, 3},
                                {2, 2}, /*pad=*/0, /*stride=*/1, /*dil=*/2);
  // The corners: 1*1 + 2*3 + 3*7 + 4*9.
  EXPECT_THAT(Compute(p, kImage, kFilter, {}), ElementsAreArray({64.0f}));
}

TEST(CpuConvolutionTest, ForwardSumsOverChannelsInBothLayouts) {
  // Channel 0 is {1, 2, 3, 4}, channel 1 {5, 6, 7, 8}; the filter picks
  // 10 x (channel 1, top left) + 1 x (channel 0, bottom right) = 54.
  const ConvProblem nchw =
      Problem(ConvOp::kForward, Layout::kNCHW, 2, 1, {2, 2}, {2, 2});
  EXPECT_THAT(
      Compute(nchw, {1, 2, 3, 4, 5, 6, 7, 8}, {0, 0, 0, 1, 10, 0, 0, 0}, {}),
      ElementsAreArray({54.0f}));
  // The same tensors channels-innermost: x in HWC order, w in RSC order.
  const ConvProblem nhwc =
      Problem(ConvOp::kForward, Layout::kNHWC, 2, 1, {2, 2}, {2, 2});
  EXPECT_THAT(
      Compute(nhwc, {1, 5, 2, 6, 3, 7, 4, 8}, {0, 10, 0, 0, 0, 0, 1, 0}, {}),
      ElementsAreArray({54.0f}));
}

TEST(CpuConvolutionTest, ForwardGroupsKeepChannelsApartInNhwc) {
  // Two groups of one channel: k0 = 2 x channel 0, k1 = -1 x channel 1.
  const ConvProblem p =
      Problem(ConvOp::kForward, Layout::kNHWC, 2, 2, {2, 2}, {1, 1},
              /*pad=*/0, /*stride=*/1, /*dil=*/1, /*groups=*/2);
  EXPECT_THAT(
      Compute(p, {1, 5, 2, 6, 3, 7, 4, 8}, {2, -1}, {}),
      ElementsAreArray({2.0f, -5.0f, 4.0f, -6.0f, 6.0f, -7.0f, 8.0f, -8.0f}));
}

TEST(CpuConvolutionTest, ForwardCoversThreeSpatialDimensions) {
  const ConvProblem p =
      Problem(ConvOp::kForward, Layout::kNCDHW, 1, 1, {2, 2, 2}, {2, 2, 2});
  // First and last element of the 2x2x2 cube.
  EXPECT_THAT(
      Compute(p, {1, 2, 3, 4, 5, 6, 7, 8}, {1, 0, 0, 0, 0, 0, 0, 1}, {}),
      ElementsAreArray({9.0f}));
}

TEST(CpuConvolutionTest, BackwardDataScattersTheFilterOverDy) {
  const ConvProblem p =
      Problem(ConvOp::kBackwardData, Layout::kNCHW, 1, 1, {3, 3}, {2, 2});
  // dy = {1, 0, 0, 2}: the filter at (0, 0) plus twice the filter at (1, 1).
  EXPECT_THAT(
      Compute(p, {}, kFilter, {1, 0, 0, 2}),
      ElementsAreArray({1.0f, 2.0f, 0.0f, 3.0f, 6.0f, 4.0f, 0.0f, 6.0f, 8.0f}));
}

TEST(CpuConvolutionTest, BackwardDataWithConvolutionModeScattersTheFlip) {
  ConvProblem p =
      Problem(ConvOp::kBackwardData, Layout::kNCHW, 1, 1, {3, 3}, {2, 2});
  p.mode = ConvMode::kConvolution;
  EXPECT_THAT(
      Compute(p, {}, kFilter, {1, 0, 0, 2}),
      ElementsAreArray({4.0f, 3.0f, 0.0f, 2.0f, 9.0f, 6.0f, 0.0f, 4.0f, 2.0f}));
}

TEST(CpuConvolutionTest, BackwardDataWithPaddingAndStride) {
  const ConvProblem p = Problem(ConvOp::kBackwardData, Layout::kNCHW, 1, 1,
                                {3, 3}, {2, 2}, /*pad=*/1, /*stride=*/2);
  // Each input position meets exactly one (output, filter) pair: input 0
  // is output 0 under filter 1, input 1 output 1 under filter 0, input 2
  // output 1 under filter 1 (per dimension).
  EXPECT_THAT(Compute(p, {}, kFilter, {1, 2, 3, 4}),
              ElementsAreArray(
                  {4.0f, 6.0f, 8.0f, 6.0f, 4.0f, 8.0f, 12.0f, 12.0f, 16.0f}));
}

TEST(CpuConvolutionTest, BackwardDataGroupsInNhwc) {
  const ConvProblem p =
      Problem(ConvOp::kBackwardData, Layout::kNHWC, 2, 2, {2, 2}, {1, 1},
              /*pad=*/0, /*stride=*/1, /*dil=*/1, /*groups=*/2);
  // dy k0 = {1, 0, 0, 1}, k1 = {0, 1, 1, 0} (HWK order below); dx c0 =
  // 2 dy_k0, dx c1 = -dy_k1.
  EXPECT_THAT(
      Compute(p, {}, {2, -1}, {1, 0, 0, 1, 0, 1, 1, 0}),
      ElementsAreArray({2.0f, 0.0f, 0.0f, -1.0f, 0.0f, -1.0f, 2.0f, 0.0f}));
}

TEST(CpuConvolutionTest, BackwardFilterCorrelatesXWithDy) {
  const ConvProblem p =
      Problem(ConvOp::kBackwardFilter, Layout::kNCHW, 1, 1, {3, 3}, {2, 2});
  // dw[f] = x[f] * 1 + x[f + (1, 1)] * 2.
  EXPECT_THAT(Compute(p, kImage, {}, {1, 0, 0, 2}),
              ElementsAreArray({11.0f, 14.0f, 20.0f, 23.0f}));
}

TEST(CpuConvolutionTest, BackwardFilterWithConvolutionModeIsFlipped) {
  ConvProblem p =
      Problem(ConvOp::kBackwardFilter, Layout::kNCHW, 1, 1, {3, 3}, {2, 2});
  p.mode = ConvMode::kConvolution;
  EXPECT_THAT(Compute(p, kImage, {}, {1, 0, 0, 2}),
              ElementsAreArray({23.0f, 20.0f, 14.0f, 11.0f}));
}

TEST(CpuConvolutionTest, BackwardFilterWithDilation) {
  const ConvProblem p = Problem(ConvOp::kBackwardFilter, Layout::kNCHW, 1, 1,
                                {3, 3}, {2, 2}, /*pad=*/0, /*stride=*/1,
                                /*dil=*/2);
  // One output, dy = 3: dw = 3 x the corners of x.
  EXPECT_THAT(Compute(p, kImage, {}, {3}),
              ElementsAreArray({3.0f, 9.0f, 21.0f, 27.0f}));
}

TEST(CpuConvolutionTest, BackwardFilterGroupsInNhwc) {
  const ConvProblem p =
      Problem(ConvOp::kBackwardFilter, Layout::kNHWC, 2, 2, {2, 2}, {1, 1},
              /*pad=*/0, /*stride=*/1, /*dil=*/1, /*groups=*/2);
  // dw k0 = x_c0 . dy_k0 = 1 + 4; dw k1 = x_c1 . dy_k1 = 6 + 7.
  EXPECT_THAT(
      Compute(p, {1, 5, 2, 6, 3, 7, 4, 8}, {}, {1, 0, 0, 1, 0, 1, 1, 0}),
      ElementsAreArray({5.0f, 13.0f}));
}

TEST(CpuConvolutionTest, RefusesInputsOfTheWrongSize) {
  const ConvProblem p =
      Problem(ConvOp::kForward, Layout::kNCHW, 1, 1, {3, 3}, {2, 2});
  EXPECT_EQ(CpuConvolution(p, kImage, {1, 2, 3}, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  ConvProblem bad = p;
  bad.groups = 2;  // does not divide c = 1
  EXPECT_EQ(CpuConvolution(bad, kImage, kFilter, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Random data for every operand of `p`.
std::vector<std::vector<float>> RandomOperands(const ConvProblem& p,
                                               uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<std::vector<float>> out;
  for (ConvOperand o : {ConvOperand::kX, ConvOperand::kW, ConvOperand::kY}) {
    std::vector<float> v(static_cast<size_t>(OperandElements(p, o)));
    for (float& e : v) e = dist(rng);
    out.push_back(std::move(v));
  }
  return out;
}

double Dot(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    sum += static_cast<double>(a[i]) * b[i];
  }
  return sum;
}

// Backward data and backward filter are the adjoints of forward:
// <fwd(x, w), dy> = <x, bwd_data(w, dy)> = <w, bwd_filter(x, dy)>.
class AdjointTest : public ::testing::TestWithParam<Layout> {};

TEST_P(AdjointTest, BackwardPassesAreTheAdjointsOfForward) {
  for (ConvMode mode : {ConvMode::kCrossCorrelation, ConvMode::kConvolution}) {
    const bool three_d = LayoutSpatialDims(GetParam()) == 3;
    ConvProblem p = Problem(
        ConvOp::kForward, GetParam(), 6, 4,
        three_d ? std::vector<int64_t>{5, 6, 7} : std::vector<int64_t>{7, 9},
        three_d ? std::vector<int64_t>{3, 2, 3} : std::vector<int64_t>{3, 2},
        /*pad=*/1, /*stride=*/2, /*dil=*/2, /*groups=*/2);
    p.n = 2;
    p.mode = mode;
    ASSERT_TRUE(p.Validate().ok()) << p.Validate();
    const std::vector<std::vector<float>> v = RandomOperands(p, 17);
    const std::vector<float>& x = v[0];
    const std::vector<float>& w = v[1];
    const std::vector<float>& dy = v[2];
    const double fwd = Dot(Compute(p, x, w, {}), dy);
    p.op = ConvOp::kBackwardData;
    const double bwd_data = Dot(x, Compute(p, {}, w, dy));
    p.op = ConvOp::kBackwardFilter;
    const double bwd_filter = Dot(w, Compute(p, x, {}, dy));
    EXPECT_NEAR(bwd_data, fwd, 1e-4 * std::abs(fwd)) << p.ToText();
    EXPECT_NEAR(bwd_filter, fwd, 1e-4 * std::abs(fwd)) << p.ToText();
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, AdjointTest,
                         ::testing::Values(Layout::kNCHW, Layout::kNHWC,
                                           Layout::kNCDHW, Layout::kNDHWC),
                         [](const ::testing::TestParamInfo<Layout>& info) {
                           return std::string(LayoutName(info.param));
                         });

// Channels-first and channels-last hold the same logical tensors in another
// memory order, so every pass gives the same values, permuted.
std::vector<float> ToChannelsLast(const std::vector<float>& first,
                                  const std::vector<int64_t>& dims) {
  const std::vector<int64_t> from = PackedStrides(dims, false);
  const std::vector<int64_t> to = PackedStrides(dims, true);
  std::vector<float> last(first.size());
  std::vector<int64_t> index(dims.size(), 0);
  for (size_t flat = 0; flat < first.size(); ++flat) {
    int64_t src = 0, dst = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      src += index[d] * from[d];
      dst += index[d] * to[d];
    }
    last[dst] = first[src];
    for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  return last;
}

TEST(CpuConvolutionTest, EveryPassAgreesAcrossLayouts) {
  for (ConvOp op :
       {ConvOp::kForward, ConvOp::kBackwardData, ConvOp::kBackwardFilter}) {
    ConvProblem first = Problem(op, Layout::kNCHW, 4, 6, {6, 5}, {3, 2},
                                /*pad=*/1, /*stride=*/2, /*dil=*/1,
                                /*groups=*/2);
    first.n = 2;
    ConvProblem last = first;
    last.layout = Layout::kNHWC;
    std::vector<std::vector<float>> v = RandomOperands(first, 5);
    std::vector<std::vector<float>> v_last;
    for (ConvOperand o : {ConvOperand::kX, ConvOperand::kW, ConvOperand::kY}) {
      v_last.push_back(
          ToChannelsLast(v[static_cast<int>(o)], OperandDims(first, o)));
    }
    const ConvOperand out = RolesOf(op).out;
    const std::vector<float> expected = ToChannelsLast(
        Compute(first, v[0], v[1], v[2]), OperandDims(first, out));
    const std::vector<float> got =
        Compute(last, v_last[0], v_last[1], v_last[2]);
    ASSERT_EQ(got.size(), expected.size()) << ConvOpName(op);
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], expected[i], 1e-5) << ConvOpName(op) << " at " << i;
    }
  }
}

}  // namespace
}  // namespace tunedb
