#include "tunedb/cudnn_helpers.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "client/answer_values.h"
#include "common/math_policy.h"
#include "common/status_macros.h"
#include "cudnn/conv_descriptors.h"
#include "cudnn/conv_operands.h"
#include "cudnn/conv_ops.h"
#include "cudnn/cudnn_device.h"
#include "cudnn/cudnn_status.h"

namespace tunedb {
namespace {

constexpr int kMaxDims = 8;

absl::StatusOr<DataType> TypeFromCudnn(cudnnDataType_t t, const char* what) {
  std::optional<DataType> type = DataTypeFromCudnn(t);
  if (!type) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": unsupported cudnnDataType_t ", static_cast<int>(t)));
  }
  return *type;
}

struct Tensor {
  DataType type;
  std::vector<int64_t> dims;
  bool channels_last;
};

absl::StatusOr<Tensor> ReadTensor(cudnnTensorDescriptor_t t, const char* what) {
  cudnnDataType_t type;
  int nb = 0;
  int dims[kMaxDims];
  int strides[kMaxDims];
  RETURN_IF_ERROR(CudnnStatusToAbsl(
      cudnnGetTensorNdDescriptor(t, kMaxDims, &type, &nb, dims, strides),
      what));
  if (nb != 4 && nb != 5) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": has ", nb, " dimensions, expected 4 or 5"));
  }
  Tensor out;
  ASSIGN_OR_RETURN(out.type, TypeFromCudnn(type, what));
  out.dims.assign(dims, dims + nb);
  const std::vector<int64_t> got(strides, strides + nb);
  if (got == PackedStrides(out.dims, false)) {
    out.channels_last = false;
  } else if (got == PackedStrides(out.dims, true)) {
    out.channels_last = true;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(what,
                     ": strides are neither packed channels-first nor "
                     "channels-last"));
  }
  return out;
}

// The filter's dimensions, checked against x's rank, type and layout.
absl::StatusOr<std::vector<int>> ReadFilter(cudnnFilterDescriptor_t w,
                                            const Tensor& xt) {
  const int spatial = static_cast<int>(xt.dims.size()) - 2;
  cudnnDataType_t wtype;
  cudnnTensorFormat_t wformat;
  int wnb = 0;
  int wdims[kMaxDims];
  RETURN_IF_ERROR(CudnnStatusToAbsl(
      cudnnGetFilterNdDescriptor(w, kMaxDims, &wtype, &wformat, &wnb, wdims),
      "w"));
  if (wnb != spatial + 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("w: has ", wnb, " dimensions, x has ", spatial + 2));
  }
  ASSIGN_OR_RETURN(DataType w_type, TypeFromCudnn(wtype, "w"));
  if (w_type != xt.type) {
    return absl::InvalidArgumentError("w: data type differs from x's");
  }
  if ((wformat == CUDNN_TENSOR_NHWC) != xt.channels_last) {
    return absl::InvalidArgumentError(
        "w: format (NCHW/NHWC) differs from x's layout");
  }
  return std::vector<int>(wdims, wdims + wnb);
}

// What a convolution descriptor says.
struct ConvParams {
  int pads[kMaxDims] = {};
  int strides[kMaxDims] = {};
  int dilations[kMaxDims] = {};
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  int groups = 1;
  cudnnMathType_t math_type = CUDNN_DEFAULT_MATH;
};

// The convolution's parameters, for `spatial` dimensions; `math`, if
// given, instead of the descriptor's math type.
absl::StatusOr<ConvParams> ReadConv(cudnnConvolutionDescriptor_t conv,
                                    int spatial,
                                    std::optional<cudnnMathType_t> math) {
  ConvParams c;
  int array_length = 0;
  RETURN_IF_ERROR(CudnnStatusToAbsl(
      cudnnGetConvolutionNdDescriptor(conv, CUDNN_DIM_MAX - 2, &array_length,
                                      c.pads, c.strides, c.dilations, &c.mode,
                                      &c.compute),
      "conv"));
  if (array_length != spatial) {
    return absl::InvalidArgumentError(absl::StrCat(
        "conv: has ", array_length, " spatial dimensions, x has ", spatial));
  }
  RETURN_IF_ERROR(CudnnStatusToAbsl(
      cudnnGetConvolutionGroupCount(conv, &c.groups), "conv"));
  if (math.has_value()) {
    c.math_type = *math;
  } else {
    RETURN_IF_ERROR(CudnnStatusToAbsl(
        cudnnGetConvolutionMathType(conv, &c.math_type), "conv"));
  }
  return c;
}

// Checks y against x and the convolution `p` gives.
absl::Status CheckOutput(cudnnTensorDescriptor_t y, const Tensor& xt,
                         const ConvProblem& p) {
  ASSIGN_OR_RETURN(Tensor yt, ReadTensor(y, "y"));
  if (yt.type != xt.type) {
    return absl::InvalidArgumentError("y: data type differs from x's");
  }
  if (yt.dims.size() != xt.dims.size() ||
      yt.channels_last != xt.channels_last) {
    return absl::InvalidArgumentError("y: rank or layout differs from x's");
  }
  if (yt.dims[0] != p.n || yt.dims[1] != p.k) {
    return absl::InvalidArgumentError(
        absl::StrCat("y: expected N=", p.n, " and K=", p.k, " channels"));
  }
  for (int i = 0; i < p.spatial_dims; ++i) {
    if (yt.dims[2 + i] != p.OutputSize(i)) {
      return absl::InvalidArgumentError(
          absl::StrCat("y: spatial size ", i, " is ", yt.dims[2 + i],
                       ", the convolution gives ", p.OutputSize(i)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ConvProblem> ProblemFromDescriptors(
    ConvOp op, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
    cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y,
    std::optional<cudnnMathType_t> math) {
  ASSIGN_OR_RETURN(Tensor xt, ReadTensor(x, "x"));
  const int spatial = static_cast<int>(xt.dims.size()) - 2;
  ASSIGN_OR_RETURN(std::vector<int> wdims, ReadFilter(w, xt));
  ASSIGN_OR_RETURN(ConvParams c, ReadConv(conv, spatial, math));

  ConvProblem p;
  p.op = op;
  p.spatial_dims = spatial;
  p.n = xt.dims[0];
  p.c = xt.dims[1];
  p.k = wdims[0];
  for (int i = 0; i < spatial; ++i) {
    p.input[i] = xt.dims[2 + i];
    p.filter[i] = wdims[2 + i];
    p.padding[i] = c.pads[i];
    p.stride[i] = c.strides[i];
    p.dilation[i] = c.dilations[i];
  }
  p.groups = c.groups;
  if (static_cast<int64_t>(wdims[1]) * c.groups != p.c) {
    return absl::InvalidArgumentError(
        absl::StrCat("w: has ", wdims[1], " input channels per group; x has ",
                     p.c, " channels in ", c.groups, " groups"));
  }
  p.mode = c.mode == CUDNN_CONVOLUTION ? ConvMode::kConvolution
                                       : ConvMode::kCrossCorrelation;
  p.input_type = xt.type;
  p.output_type = xt.type;
  ASSIGN_OR_RETURN(p.compute_type, TypeFromCudnn(c.compute, "conv compute"));
  p.layout = LayoutFor(xt.channels_last, spatial);
  p.allow_tensor_cores = c.math_type != CUDNN_FMA_MATH;
  // The caller's math type says only whether tensor cores are allowed; with
  // them, TF32 is (cuDNN's default math permits it).
  p.allow_tf32 = KeyAllowsTf32(p.input_type, p.allow_tensor_cores, true);
  if (y != nullptr) {
    RETURN_IF_ERROR(CheckOutput(y, xt, p));
  }
  RETURN_IF_ERROR(p.Validate());
  return p;
}

absl::StatusOr<DeviceKey> CurrentDeviceKey() {
  absl::StatusOr<int> device = CurrentCudaDevice();
  absl::StatusOr<DeviceKey> key =
      device.ok() ? QueryDeviceKey(*device) : device.status();
  if (!key.ok()) {
    return absl::UnavailableError(
        absl::StrCat("no usable CUDA device: ", key.status().message()));
  }
  return key;
}

absl::StatusOr<std::unique_ptr<CudnnDescriptors>> CudnnDescriptors::Create(
    const ConvProblem& p) {
  ASSIGN_OR_RETURN(ConvDescriptors owned, DescribeConv(p));
  std::unique_ptr<CudnnDescriptors> d(new CudnnDescriptors());
  d->x_ = owned.x.release();
  d->w_ = owned.w.release();
  d->conv_ = owned.conv.release();
  d->y_ = owned.y.release();
  return d;
}

CudnnDescriptors::~CudnnDescriptors() {
  if (x_ != nullptr) cudnnDestroyTensorDescriptor(x_);
  if (w_ != nullptr) cudnnDestroyFilterDescriptor(w_);
  if (conv_ != nullptr) cudnnDestroyConvolutionDescriptor(conv_);
  if (y_ != nullptr) cudnnDestroyTensorDescriptor(y_);
}

namespace {

bool Fits(const Constraints& c, int64_t memory, bool deterministic) {
  if (c.max_workspace_bytes.has_value() && memory > *c.max_workspace_bytes) {
    return false;
  }
  return !c.deterministic_only || deterministic;
}

std::optional<AlgoResult> FirstFit(const std::vector<AlgoPerf>& perf,
                                   const Constraints& c) {
  for (const AlgoPerf& e : perf) {
    if (e.status != CUDNN_STATUS_SUCCESS) continue;
    if (!Fits(c, e.memory, e.deterministic)) continue;
    AlgoResult r;
    r.algo = e.algo;
    r.math_type = e.math;
    r.workspace_bytes = e.memory;
    r.deterministic = e.deterministic;
    return r;
  }
  return std::nullopt;
}

ConvDescriptorView ViewOf(const CudnnDescriptors& d) {
  return {d.x(), d.w(), d.conv(), d.y()};
}

// cuDNN's heuristic ranking for the problem of `d`.
std::optional<AlgoResult> RunHeuristic(cudnnHandle_t handle, ConvOp op,
                                       const CudnnDescriptors& d,
                                       const Constraints& c) {
  absl::StatusOr<std::vector<AlgoPerf>> perf =
      HeuristicAlgorithms(handle, op, ViewOf(d));
  if (!perf.ok()) return std::nullopt;
  return FirstFit(*perf, c);
}

// cudnnGetConvolution*WorkspaceSize for `algo` with `math` on copies of the
// descriptors; 0 if cuDNN refuses.
size_t WorkspaceFor(cudnnHandle_t handle, ConvOp op, const ConvProblem& p,
                    int algo, cudnnMathType_t math) {
  absl::StatusOr<ConvDescriptors> d = DescribeConv(p);
  if (!d.ok() || !SetMathType(d->conv.get(), FromCudnn(math)).ok()) return 0;
  absl::StatusOr<int64_t> bytes =
      AlgoWorkspaceSize(handle, op, d->view(), algo);
  return bytes.ok() ? static_cast<size_t>(*bytes) : 0;
}

}  // namespace

HeuristicFn CudnnHeuristic(cudnnHandle_t handle) {
  // Serializes the calls on `handle` (a captured handle, which
  // ABSL_GUARDED_BY cannot name).
  auto mu = std::make_shared<absl::Mutex>();
  return [handle, mu](const ProblemKey& key,
                      const Constraints& c) -> std::optional<AlgoResult> {
    absl::StatusOr<std::unique_ptr<CudnnDescriptors>> d =
        CudnnDescriptors::Create(key.problem);
    if (!d.ok()) return std::nullopt;
    absl::MutexLock lock(mu.get());
    return RunHeuristic(handle, key.problem.op, **d, c);
  };
}

absl::StatusOr<CudnnAlgo> ChooseAlgo(Client& client, cudnnHandle_t handle,
                                     const DeviceKey& device, ConvOp op,
                                     cudnnTensorDescriptor_t x,
                                     cudnnFilterDescriptor_t w,
                                     cudnnConvolutionDescriptor_t conv,
                                     cudnnTensorDescriptor_t y,
                                     const Constraints& constraints) {
  ProblemKey key;
  key.device = device;
  ASSIGN_OR_RETURN(key.problem, ProblemFromDescriptors(op, x, w, conv, y));
  Answer a = client.Get(key, constraints);
  if (!a.ok()) {
    ASSIGN_OR_RETURN(std::unique_ptr<CudnnDescriptors> d,
                     CudnnDescriptors::Create(key.problem));
    std::optional<AlgoResult> guess = RunHeuristic(handle, op, *d, constraints);
    if (!guess.has_value()) {
      return absl::NotFoundError(
          "no cuDNN algorithm for this convolution meets the constraints");
    }
    a = AnswerFrom(Source::kHeuristic, *guess);
  }
  CudnnAlgo out;
  out.source = a.source;
  out.math_type = ToCudnn(a.math_type);
  out.fwd_algo = static_cast<cudnnConvolutionFwdAlgo_t>(a.algo);
  out.bwd_data_algo = static_cast<cudnnConvolutionBwdDataAlgo_t>(a.algo);
  out.bwd_filter_algo = static_cast<cudnnConvolutionBwdFilterAlgo_t>(a.algo);
  out.workspace_bytes = std::max<size_t>(
      static_cast<size_t>(std::max<int64_t>(0, a.workspace_bytes)),
      WorkspaceFor(handle, op, key.problem, a.algo, out.math_type));
  return out;
}

}  // namespace tunedb
