#include "tunedb/cudnn_helpers.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tunedb {
namespace {

constexpr int kMaxDims = 8;

absl::Status Check(cudnnStatus_t s, const char* what) {
  if (s == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": ", cudnnGetErrorString(s)));
}

absl::StatusOr<DataType> TypeFromCudnn(cudnnDataType_t t, const char* what) {
  std::optional<DataType> type = DataTypeFromCudnn(t);
  if (!type) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": unsupported cudnnDataType_t ", static_cast<int>(t)));
  }
  return *type;
}

// Packed strides of an {N, C, spatial...} tensor.
std::vector<int> PackedStrides(const std::vector<int>& dims,
                               bool channels_last) {
  const int nb = static_cast<int>(dims.size());
  std::vector<int> strides(nb);
  if (!channels_last) {
    int s = 1;
    for (int i = nb - 1; i >= 0; --i) {
      strides[i] = s;
      s *= dims[i];
    }
  } else {
    int s = 1;
    strides[1] = s;
    s *= dims[1];
    for (int i = nb - 1; i >= 2; --i) {
      strides[i] = s;
      s *= dims[i];
    }
    strides[0] = s;
  }
  return strides;
}

struct Tensor {
  DataType type;
  std::vector<int> dims;
  bool channels_last;
};

absl::StatusOr<Tensor> ReadTensor(cudnnTensorDescriptor_t t, const char* what) {
  cudnnDataType_t type;
  int nb = 0;
  int dims[kMaxDims];
  int strides[kMaxDims];
  RETURN_IF_ERROR(
      Check(cudnnGetTensorNdDescriptor(t, kMaxDims, &type, &nb, dims, strides),
            what));
  if (nb != 4 && nb != 5) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": has ", nb, " dimensions, expected 4 or 5"));
  }
  Tensor out;
  ASSIGN_OR_RETURN(out.type, TypeFromCudnn(type, what));
  out.dims.assign(dims, dims + nb);
  const std::vector<int> got(strides, strides + nb);
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

}  // namespace

absl::StatusOr<ConvProblem> ProblemFromDescriptors(
    ConvOp op, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
    cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y,
    std::optional<cudnnMathType_t> math) {
  ASSIGN_OR_RETURN(Tensor xt, ReadTensor(x, "x"));
  const int spatial = static_cast<int>(xt.dims.size()) - 2;

  cudnnDataType_t wtype;
  cudnnTensorFormat_t wformat;
  int wnb = 0;
  int wdims[kMaxDims];
  RETURN_IF_ERROR(Check(
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

  int array_length = 0;
  int pads[kMaxDims];
  int strides[kMaxDims];
  int dilations[kMaxDims];
  cudnnConvolutionMode_t mode;
  cudnnDataType_t compute;
  RETURN_IF_ERROR(Check(cudnnGetConvolutionNdDescriptor(
                            conv, CUDNN_DIM_MAX - 2, &array_length, pads,
                            strides, dilations, &mode, &compute),
                        "conv"));
  if (array_length != spatial) {
    return absl::InvalidArgumentError(absl::StrCat(
        "conv: has ", array_length, " spatial dimensions, x has ", spatial));
  }
  int groups = 1;
  RETURN_IF_ERROR(Check(cudnnGetConvolutionGroupCount(conv, &groups), "conv"));
  cudnnMathType_t math_type = CUDNN_DEFAULT_MATH;
  if (math.has_value()) {
    math_type = *math;
  } else {
    RETURN_IF_ERROR(
        Check(cudnnGetConvolutionMathType(conv, &math_type), "conv"));
  }

  ConvProblem p;
  p.op = op;
  p.spatial_dims = spatial;
  p.n = xt.dims[0];
  p.c = xt.dims[1];
  p.k = wdims[0];
  for (int i = 0; i < spatial; ++i) {
    p.input[i] = xt.dims[2 + i];
    p.filter[i] = wdims[2 + i];
    p.padding[i] = pads[i];
    p.stride[i] = strides[i];
    p.dilation[i] = dilations[i];
  }
  p.groups = groups;
  if (static_cast<int64_t>(wdims[1]) * groups != p.c) {
    return absl::InvalidArgumentError(
        absl::StrCat("w: has ", wdims[1], " input channels per group; x has ",
                     p.c, " channels in ", groups, " groups"));
  }
  p.mode = mode == CUDNN_CONVOLUTION ? ConvMode::kConvolution
                                     : ConvMode::kCrossCorrelation;
  p.input_type = xt.type;
  p.output_type = xt.type;
  ASSIGN_OR_RETURN(p.compute_type, TypeFromCudnn(compute, "conv compute"));
  p.layout = LayoutFor(xt.channels_last, spatial);
  p.allow_tensor_cores = math_type != CUDNN_FMA_MATH;
  p.allow_tf32 = p.allow_tensor_cores && p.input_type == DataType::kFloat;

  if (y != nullptr) {
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
    for (int i = 0; i < spatial; ++i) {
      if (yt.dims[2 + i] != p.OutputSize(i)) {
        return absl::InvalidArgumentError(
            absl::StrCat("y: spatial size ", i, " is ", yt.dims[2 + i],
                         ", the convolution gives ", p.OutputSize(i)));
      }
    }
  }
  RETURN_IF_ERROR(p.Validate());
  return p;
}

absl::StatusOr<DeviceKey> CurrentDeviceKey() {
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  cudaDeviceProp prop;
  if (e == cudaSuccess) e = cudaGetDeviceProperties(&prop, device);
  int runtime = 0;
  if (e == cudaSuccess) e = cudaRuntimeGetVersion(&runtime);
  if (e != cudaSuccess) {
    return absl::UnavailableError(
        absl::StrCat("no usable CUDA device: ", cudaGetErrorString(e)));
  }
  DeviceKey key;
  key.gpu_model = prop.name;
  key.cc_major = prop.major;
  key.cc_minor = prop.minor;
  key.sm_count = prop.multiProcessorCount;
  key.cudnn_version = static_cast<int>(cudnnGetVersion());
  key.cuda_runtime_version = runtime;
  return key;
}

absl::StatusOr<std::unique_ptr<CudnnDescriptors>> CudnnDescriptors::Create(
    const ConvProblem& p) {
  RETURN_IF_ERROR(p.Validate());
  std::unique_ptr<CudnnDescriptors> d(new CudnnDescriptors());
  RETURN_IF_ERROR(Check(cudnnCreateTensorDescriptor(&d->x_), "create x"));
  RETURN_IF_ERROR(Check(cudnnCreateFilterDescriptor(&d->w_), "create w"));
  RETURN_IF_ERROR(
      Check(cudnnCreateConvolutionDescriptor(&d->conv_), "create conv"));
  RETURN_IF_ERROR(Check(cudnnCreateTensorDescriptor(&d->y_), "create y"));

  const int spatial = p.spatial_dims;
  const bool last = IsChannelsLast(p.layout);
  const cudnnDataType_t type = ToCudnn(p.input_type);
  std::vector<int> xdims = {static_cast<int>(p.n), static_cast<int>(p.c)};
  std::vector<int> wdims = {static_cast<int>(p.k),
                            static_cast<int>(p.c / p.groups)};
  std::vector<int> ydims = {static_cast<int>(p.n), static_cast<int>(p.k)};
  std::vector<int> pads, strides, dilations;
  for (int i = 0; i < spatial; ++i) {
    xdims.push_back(static_cast<int>(p.input[i]));
    wdims.push_back(static_cast<int>(p.filter[i]));
    ydims.push_back(static_cast<int>(p.OutputSize(i)));
    pads.push_back(static_cast<int>(p.padding[i]));
    strides.push_back(static_cast<int>(p.stride[i]));
    dilations.push_back(static_cast<int>(p.dilation[i]));
  }
  const int nb = spatial + 2;
  RETURN_IF_ERROR(
      Check(cudnnSetTensorNdDescriptor(d->x_, type, nb, xdims.data(),
                                       PackedStrides(xdims, last).data()),
            "set x"));
  RETURN_IF_ERROR(Check(
      cudnnSetFilterNdDescriptor(d->w_, type,
                                 last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                 nb, wdims.data()),
      "set w"));
  RETURN_IF_ERROR(Check(
      cudnnSetConvolutionNdDescriptor(
          d->conv_, spatial, pads.data(), strides.data(), dilations.data(),
          p.mode == ConvMode::kConvolution ? CUDNN_CONVOLUTION
                                           : CUDNN_CROSS_CORRELATION,
          ToCudnn(p.compute_type)),
      "set conv"));
  RETURN_IF_ERROR(
      Check(cudnnSetConvolutionGroupCount(d->conv_, static_cast<int>(p.groups)),
            "set groups"));
  // Without TF32 an fp32 problem may use no tensor cores at all.
  const bool fma = !p.allow_tensor_cores ||
                   (p.input_type == DataType::kFloat && !p.allow_tf32);
  RETURN_IF_ERROR(
      Check(cudnnSetConvolutionMathType(
                d->conv_, fma ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH),
            "set math"));
  RETURN_IF_ERROR(
      Check(cudnnSetTensorNdDescriptor(d->y_, type, nb, ydims.data(),
                                       PackedStrides(ydims, last).data()),
            "set y"));
  return d;
}

CudnnDescriptors::~CudnnDescriptors() {
  if (x_ != nullptr) cudnnDestroyTensorDescriptor(x_);
  if (w_ != nullptr) cudnnDestroyFilterDescriptor(w_);
  if (conv_ != nullptr) cudnnDestroyConvolutionDescriptor(conv_);
  if (y_ != nullptr) cudnnDestroyTensorDescriptor(y_);
}

namespace {

bool Fits(const Constraints& c, size_t memory, cudnnDeterminism_t det) {
  if (c.max_workspace_bytes.has_value() &&
      static_cast<int64_t>(memory) > *c.max_workspace_bytes) {
    return false;
  }
  return !c.deterministic_only || det == CUDNN_DETERMINISTIC;
}

template <typename Perf>
std::optional<AlgoResult> FirstFit(const Perf* perf, int count,
                                   const Constraints& c) {
  for (int i = 0; i < count; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
    if (!Fits(c, perf[i].memory, perf[i].determinism)) continue;
    AlgoResult r;
    r.algo = static_cast<int>(perf[i].algo);
    r.math_type = FromCudnn(perf[i].mathType);
    r.workspace_bytes = static_cast<int64_t>(perf[i].memory);
    r.deterministic = perf[i].determinism == CUDNN_DETERMINISTIC;
    return r;
  }
  return std::nullopt;
}

// cuDNN's heuristic ranking for the problem of `d`.
std::optional<AlgoResult> RunHeuristic(cudnnHandle_t handle, ConvOp op,
                                       const CudnnDescriptors& d,
                                       const Constraints& c) {
  constexpr int kMax = 16;
  int count = 0;
  switch (op) {
    case ConvOp::kForward: {
      cudnnConvolutionFwdAlgoPerf_t perf[kMax];
      if (cudnnGetConvolutionForwardAlgorithm_v7(handle, d.x(), d.w(), d.conv(),
                                                 d.y(), kMax, &count, perf) !=
          CUDNN_STATUS_SUCCESS) {
        return std::nullopt;
      }
      return FirstFit(perf, count, c);
    }
    case ConvOp::kBackwardData: {
      cudnnConvolutionBwdDataAlgoPerf_t perf[kMax];
      if (cudnnGetConvolutionBackwardDataAlgorithm_v7(
              handle, d.w(), d.y(), d.conv(), d.x(), kMax, &count, perf) !=
          CUDNN_STATUS_SUCCESS) {
        return std::nullopt;
      }
      return FirstFit(perf, count, c);
    }
    case ConvOp::kBackwardFilter: {
      cudnnConvolutionBwdFilterAlgoPerf_t perf[kMax];
      if (cudnnGetConvolutionBackwardFilterAlgorithm_v7(
              handle, d.x(), d.y(), d.conv(), d.w(), kMax, &count, perf) !=
          CUDNN_STATUS_SUCCESS) {
        return std::nullopt;
      }
      return FirstFit(perf, count, c);
    }
  }
  return std::nullopt;
}

// cudnnGetConvolution*WorkspaceSize for `algo` with `math` on copies of the
// descriptors; 0 if cuDNN refuses.
size_t WorkspaceFor(cudnnHandle_t handle, ConvOp op, const ConvProblem& p,
                    int algo, cudnnMathType_t math) {
  absl::StatusOr<std::unique_ptr<CudnnDescriptors>> d =
      CudnnDescriptors::Create(p);
  if (!d.ok()) return 0;
  const CudnnDescriptors& s = **d;
  if (cudnnSetConvolutionMathType(s.conv(), math) != CUDNN_STATUS_SUCCESS) {
    return 0;
  }
  size_t bytes = 0;
  cudnnStatus_t st = CUDNN_STATUS_NOT_SUPPORTED;
  switch (op) {
    case ConvOp::kForward:
      st = cudnnGetConvolutionForwardWorkspaceSize(
          handle, s.x(), s.w(), s.conv(), s.y(),
          static_cast<cudnnConvolutionFwdAlgo_t>(algo), &bytes);
      break;
    case ConvOp::kBackwardData:
      st = cudnnGetConvolutionBackwardDataWorkspaceSize(
          handle, s.w(), s.y(), s.conv(), s.x(),
          static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), &bytes);
      break;
    case ConvOp::kBackwardFilter:
      st = cudnnGetConvolutionBackwardFilterWorkspaceSize(
          handle, s.x(), s.y(), s.conv(), s.w(),
          static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), &bytes);
      break;
  }
  return st == CUDNN_STATUS_SUCCESS ? bytes : 0;
}

}  // namespace

HeuristicFn CudnnHeuristic(cudnnHandle_t handle) {
  auto mu = std::make_shared<std::mutex>();
  return [handle, mu](const ProblemKey& key,
                      const Constraints& c) -> std::optional<AlgoResult> {
    absl::StatusOr<std::unique_ptr<CudnnDescriptors>> d =
        CudnnDescriptors::Create(key.problem);
    if (!d.ok()) return std::nullopt;
    std::lock_guard<std::mutex> lock(*mu);
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
    a = Answer{Source::kHeuristic, guess->algo, guess->math_type,
               guess->workspace_bytes};
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
