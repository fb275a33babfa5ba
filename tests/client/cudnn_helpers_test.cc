// cuDNN helpers. Descriptor <-> problem conversions are host-only cuDNN
// calls and run without a GPU (checked on the CI machine, which has none);
// the calls that need a GPU skip when there is none.
#include "tunedb/cudnn_helpers.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "client_test_util.h"
#include "tunedb/conv_shape.h"

namespace tunedb {

// gtest prints parameters with this (found by argument-dependent lookup).
void PrintTo(const ConvProblem& p, std::ostream* os) { *os << p.ToText(); }

namespace {

bool HaveGpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

ConvProblem Problem(ConvShape s) { return MakeConvProblem(s).value(); }

class RoundTripTest : public ::testing::TestWithParam<ConvProblem> {};

TEST_P(RoundTripTest, DescriptorsDescribeTheProblem) {
  const ConvProblem& p = GetParam();
  absl::StatusOr<std::unique_ptr<CudnnDescriptors>> d =
      CudnnDescriptors::Create(p);
  ASSERT_TRUE(d.ok()) << d.status();
  absl::StatusOr<ConvProblem> back = ProblemFromDescriptors(
      p.op, (*d)->x(), (*d)->w(), (*d)->conv(), (*d)->y());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ToText(), p.ToText());
}

ConvShape Base() {
  ConvShape s;
  s.n = 32;
  s.c = 64;
  s.k = 128;
  s.input = {56, 56};
  s.filter = {3, 3};
  s.padding = {1, 1};
  return s;
}

std::vector<ConvProblem> Problems() {
  std::vector<ConvProblem> out;
  out.push_back(Problem(Base()));
  ConvShape s = Base();
  s.stride = {2, 2};
  s.dilation = {1, 2};
  s.channels_last = true;
  s.data_type = DataType::kHalf;
  out.push_back(Problem(s));
  s = Base();
  s.op = ConvOp::kBackwardData;
  s.groups = 64;
  s.k = 64;
  s.mode = ConvMode::kConvolution;
  s.data_type = DataType::kBFloat16;
  out.push_back(Problem(s));
  s = Base();
  s.op = ConvOp::kBackwardFilter;
  s.input = {8, 28, 28};
  s.filter = {3, 3, 3};
  s.padding = {1, 1, 1};
  out.push_back(Problem(s));
  s = Base();
  s.allow_tensor_cores = false;
  out.push_back(Problem(s));
  s = Base();
  s.data_type = DataType::kDouble;
  s.compute_type = DataType::kDouble;
  out.push_back(Problem(s));
  return out;
}

INSTANTIATE_TEST_SUITE_P(Shapes, RoundTripTest, ::testing::ValuesIn(Problems()),
                         [](const ::testing::TestParamInfo<ConvProblem>& info) {
                           const ConvProblem& p = info.param;
                           return std::string(ConvOpName(p.op)) + "_" +
                                  std::string(LayoutName(p.layout)) + "_" +
                                  std::string(DataTypeName(p.input_type)) +
                                  "_" + std::to_string(info.index);
                         });

TEST(CudnnHelpersTest, MathTypeDecidesTensorCores) {
  const ConvProblem p = Problem(Base());
  auto d = CudnnDescriptors::Create(p).value();
  absl::StatusOr<ConvProblem> fma = ProblemFromDescriptors(
      p.op, d->x(), d->w(), d->conv(), d->y(), CUDNN_FMA_MATH);
  ASSERT_TRUE(fma.ok()) << fma.status();
  EXPECT_FALSE(fma->allow_tensor_cores);
  EXPECT_FALSE(fma->allow_tf32);
  absl::StatusOr<ConvProblem> tc = ProblemFromDescriptors(
      p.op, d->x(), d->w(), d->conv(), nullptr, CUDNN_TENSOR_OP_MATH);
  ASSERT_TRUE(tc.ok()) << tc.status();
  EXPECT_TRUE(tc->allow_tensor_cores);
  EXPECT_TRUE(tc->allow_tf32);
  for (MathType m : {MathType::kDefault, MathType::kTensorOp,
                     MathType::kTensorOpAllowConversion, MathType::kFma}) {
    EXPECT_EQ(FromCudnn(ToCudnn(m)), m);
  }
}

TEST(CudnnHelpersTest, FourDimensionalSetterWorksToo) {
  cudnnTensorDescriptor_t x, y;
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
  ASSERT_EQ(cudnnCreateTensorDescriptor(&x), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnCreateTensorDescriptor(&y), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnCreateFilterDescriptor(&w), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnCreateConvolutionDescriptor(&conv), CUDNN_STATUS_SUCCESS);
  cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, 8, 16, 32,
                             32);
  cudnnSetFilter4dDescriptor(w, CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, 24, 16, 5,
                             5);
  cudnnSetConvolution2dDescriptor(conv, 2, 2, 1, 1, 1, 1,
                                  CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
  cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, 8, 24, 32,
                             32);
  absl::StatusOr<ConvProblem> p =
      ProblemFromDescriptors(ConvOp::kForward, x, w, conv, y);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->ToText(),
            "op=fwd n=8 c=16 k=24 in=32x32 filt=5x5 pad=2x2 stride=1x1 "
            "dil=1x1 groups=1 mode=xcorr in_type=f16 out_type=f16 "
            "compute=f32 layout=nhwc tc=1 tf32=0");

  // A y of the wrong size is refused.
  cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, 8, 24, 30,
                             30);
  p = ProblemFromDescriptors(ConvOp::kForward, x, w, conv, y);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  // A filter layout that disagrees with x's is refused.
  cudnnSetFilter4dDescriptor(w, CUDNN_DATA_HALF, CUDNN_TENSOR_NCHW, 24, 16, 5,
                             5);
  p = ProblemFromDescriptors(ConvOp::kForward, x, w, conv, nullptr);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  // Non-packed strides are refused.
  const int dims[4] = {8, 16, 32, 32};
  const int strides[4] = {16 * 32 * 40, 32 * 40, 40, 1};
  cudnnSetTensorNdDescriptor(x, CUDNN_DATA_HALF, 4, dims, strides);
  p = ProblemFromDescriptors(ConvOp::kForward, x, w, conv, nullptr);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);

  cudnnDestroyTensorDescriptor(x);
  cudnnDestroyTensorDescriptor(y);
  cudnnDestroyFilterDescriptor(w);
  cudnnDestroyConvolutionDescriptor(conv);
}

TEST(CudnnHelpersTest, CurrentDeviceKey) {
  absl::StatusOr<DeviceKey> key = CurrentDeviceKey();
  if (!HaveGpu()) {
    EXPECT_EQ(key.status().code(), absl::StatusCode::kUnavailable);
    GTEST_SKIP() << "no GPU: checked only that CurrentDeviceKey fails cleanly";
  }
  ASSERT_TRUE(key.ok()) << key.status();
  EXPECT_FALSE(key->gpu_model.empty());
  EXPECT_GT(key->sm_count, 0);
  EXPECT_EQ(key->cudnn_version, static_cast<int>(cudnnGetVersion()));
  EXPECT_TRUE(key->Validate().ok()) << key->Validate();
}

TEST(CudnnHelpersTest, ChooseAlgoFallsBackToCudnnHeuristic) {
  if (!HaveGpu()) GTEST_SKIP() << "needs a GPU (cudnnCreate)";
  cudnnHandle_t handle;
  ASSERT_EQ(cudnnCreate(&handle), CUDNN_STATUS_SUCCESS);
  client_test::TempDir dir;
  ClientOptions o;
  o.address = "unix:" + dir.File("absent.sock");
  o.heuristic = CudnnHeuristic(handle);
  auto client = Client::Create(o).value();
  const DeviceKey device = CurrentDeviceKey().value();
  const ConvProblem p = Problem(Base());
  auto d = CudnnDescriptors::Create(p).value();
  absl::StatusOr<CudnnAlgo> algo =
      ChooseAlgo(*client, handle, device, ConvOp::kForward, d->x(), d->w(),
                 d->conv(), d->y());
  ASSERT_TRUE(algo.ok()) << algo.status();
  EXPECT_EQ(algo->source, Source::kHeuristic);
  EXPECT_LT(static_cast<int>(algo->fwd_algo), CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
  client.reset();
  cudnnDestroy(handle);
}

}  // namespace
}  // namespace tunedb
