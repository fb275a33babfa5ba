#include "cudnn/cudnn_conv.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cudnn/cudnn_status.h"
#include "common/status_macros.h"

namespace tunedb {
namespace {

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (exp <= 0) {  // subnormal or zero in half
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const int shift = 14 - exp;
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  uint32_t half = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half;
  return static_cast<uint16_t>(sign | half);
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) |
             ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

float Bf16ToFloat(uint16_t b) {
  const uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// splitmix64: fast, seedable, good enough for test data.
uint64_t NextRandom(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Dims and packed strides of an activation tensor in `layout`.
void ActivationDims(int64_t n, int64_t c, const int64_t* spatial, int nsp,
                    bool channels_last, std::vector<int>& dims,
                    std::vector<int>& strides) {
  const int nb = nsp + 2;
  dims.assign(nb, 0);
  strides.assign(nb, 0);
  dims[0] = static_cast<int>(n);
  dims[1] = static_cast<int>(c);
  for (int i = 0; i < nsp; ++i) dims[2 + i] = static_cast<int>(spatial[i]);
  if (!channels_last) {
    strides[nb - 1] = 1;
    for (int i = nb - 2; i >= 0; --i) strides[i] = strides[i + 1] * dims[i + 1];
  } else {
    strides[1] = 1;
    int s = dims[1];
    for (int i = nb - 1; i >= 2; --i) {
      strides[i] = s;
      s *= dims[i];
    }
    strides[0] = s;
  }
}

}  // namespace

std::vector<MathType> SearchMathTypes(const ConvProblem& p) {
  switch (p.input_type) {
    case DataType::kDouble:
      return {MathType::kDefault};
    case DataType::kFloat:
      if (p.allow_tensor_cores && p.allow_tf32) {
        return {MathType::kDefault, MathType::kFma};
      }
      return {MathType::kFma};
    case DataType::kHalf:
    case DataType::kBFloat16:
      if (p.allow_tensor_cores) return {MathType::kTensorOp, MathType::kFma};
      return {MathType::kFma};
  }
  return {MathType::kDefault};
}

double VerifyTolerance(const ConvProblem& p, MathType math) {
  switch (p.input_type) {
    case DataType::kDouble:
      return 1e-9;
    case DataType::kFloat:
      // TF32 keeps 10 mantissa bits; FFT/Winograd in fp32 lose a little.
      return math == MathType::kFma ? 1e-3 : 1e-2;
    case DataType::kHalf:
      return 1e-2;
    case DataType::kBFloat16:
      return 5e-2;
  }
  return 1e-2;
}

double RelativeL2(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double diff = 0, ref = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    diff += d * d;
    ref += static_cast<double>(b[i]) * b[i];
  }
  if (!std::isfinite(diff) || !std::isfinite(ref)) {
    return std::numeric_limits<double>::infinity();
  }
  return std::sqrt(diff) / std::max(std::sqrt(ref), 1e-30);
}

absl::StatusOr<std::unique_ptr<CudnnConv>> CudnnConv::Create(
    const ConvProblem& problem, cudnnHandle_t handle, cudaStream_t stream,
    uint64_t seed) {
  RETURN_IF_ERROR(problem.Validate());
  std::unique_ptr<CudnnConv> conv(new CudnnConv());
  conv->problem_ = problem;
  conv->handle_ = handle;
  conv->stream_ = stream;
  RETURN_IF_ERROR(conv->Init(seed));
  return conv;
}

absl::Status CudnnConv::Init(uint64_t seed) {
  const ConvProblem& p = problem_;
  if (p.input_type != p.output_type) {
    return absl::InvalidArgumentError(
        "cuDNN convolutions need output_type == input_type");
  }
  data_type_ = ToCudnn(p.input_type);
  cudnnDataType_t compute = ToCudnn(p.compute_type);
  const int nsp = p.spatial_dims;
  const bool channels_last = IsChannelsLast(p.layout);
  if (LayoutSpatialDims(p.layout) != nsp) {
    return absl::InvalidArgumentError("layout does not match spatial_dims");
  }

  ASSIGN_OR_RETURN(x_desc_, CreateTensorDescriptor());
  ASSIGN_OR_RETURN(y_desc_, CreateTensorDescriptor());
  ASSIGN_OR_RETURN(w_desc_, CreateFilterDescriptor());
  ASSIGN_OR_RETURN(conv_desc_, CreateConvolutionDescriptor());

  std::vector<int> dims, strides;
  ActivationDims(p.n, p.c, p.input.data(), nsp, channels_last, dims, strides);
  RETURN_IF_ERROR(CudnnStatusToAbsl(
      cudnnSetTensorNdDescriptor(x_desc_.get(), data_type_, nsp + 2,
                                 dims.data(), strides.data()),
      "cudnnSetTensorNdDescriptor(x)"));

  std::vector<int> wdims(nsp + 2);
  wdims[0] = static_cast<int>(p.k);
  wdims[1] = static_cast<int>(p.c / p.groups);
  for (int i = 0; i < nsp; ++i) wdims[2 + i] = static_cast<int>(p.filter[i]);
  RETURN_IF_ERROR(CudnnStatusToAbsl(
      cudnnSetFilterNdDescriptor(
          w_desc_.get(), data_type_,
          channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, nsp + 2,
          wdims.data()),
      "cudnnSetFilterNdDescriptor"));

  std::vector<int> pad(nsp), stride(nsp), dil(nsp);
  for (int i = 0; i < nsp; ++i) {
    pad[i] = static_cast<int>(p.padding[i]);
    stride[i] = static_cast<int>(p.stride[i]);
    dil[i] = static_cast<int>(p.dilation[i]);
  }
  RETURN_IF_ERROR(CudnnStatusToAbsl(
      cudnnSetConvolutionNdDescriptor(
          conv_desc_.get(), nsp, pad.data(), stride.data(), dil.data(),
          p.mode == ConvMode::kConvolution ? CUDNN_CONVOLUTION
                                           : CUDNN_CROSS_CORRELATION,
          compute),
      "cudnnSetConvolutionNdDescriptor"));
  RETURN_IF_ERROR(CudnnStatusToAbsl(
      cudnnSetConvolutionGroupCount(conv_desc_.get(),
                                    static_cast<int>(p.groups)),
      "cudnnSetConvolutionGroupCount"));

  std::vector<int> ydims(nsp + 2);
  RETURN_IF_ERROR(CudnnStatusToAbsl(
      cudnnGetConvolutionNdForwardOutputDim(conv_desc_.get(), x_desc_.get(),
                                            w_desc_.get(), nsp + 2,
                                            ydims.data()),
      "cudnnGetConvolutionNdForwardOutputDim"));
  int64_t out_spatial[ConvProblem::kMaxSpatialDims] = {0, 0, 0};
  for (int i = 0; i < nsp; ++i) {
    out_spatial[i] = ydims[2 + i];
    if (ydims[2 + i] != p.OutputSize(i)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cuDNN output size ", ydims[2 + i], " != expected ", p.OutputSize(i),
          " in spatial dimension ", i));
    }
  }
  ActivationDims(p.n, p.k, out_spatial, nsp, channels_last, dims, strides);
  RETURN_IF_ERROR(CudnnStatusToAbsl(
      cudnnSetTensorNdDescriptor(y_desc_.get(), data_type_, nsp + 2,
                                 dims.data(), strides.data()),
      "cudnnSetTensorNdDescriptor(y)"));

  x_elems_ = p.InputElements();
  w_elems_ = p.FilterElements();
  y_elems_ = p.OutputElements();
  const int64_t elem = DataTypeBytes(p.input_type);
  ASSIGN_OR_RETURN(x_, DeviceBuffer::Allocate(x_elems_ * elem));
  ASSIGN_OR_RETURN(w_, DeviceBuffer::Allocate(w_elems_ * elem));
  ASSIGN_OR_RETURN(y_, DeviceBuffer::Allocate(y_elems_ * elem));
  RETURN_IF_ERROR(Fill(x_, x_elems_, seed));
  RETURN_IF_ERROR(Fill(w_, w_elems_, seed + 1));
  RETURN_IF_ERROR(Fill(y_, y_elems_, seed + 2));
  return absl::OkStatus();
}

absl::Status CudnnConv::Fill(const DeviceBuffer& buffer, int64_t elements,
                             uint64_t seed) {
  uint64_t state = seed * 0x2545f4914f6cdd1dull + 1;
  const int elem = DataTypeBytes(problem_.input_type);
  std::vector<unsigned char> host(static_cast<size_t>(elements) * elem);
  for (int64_t i = 0; i < elements; ++i) {
    // Uniform in [-1, 1), never exactly zero for the whole tensor.
    const float v =
        static_cast<float>(static_cast<double>(NextRandom(state) >> 11) *
                               (2.0 / 9007199254740992.0) -
                           1.0);
    unsigned char* dst = host.data() + i * elem;
    switch (problem_.input_type) {
      case DataType::kFloat:
        std::memcpy(dst, &v, 4);
        break;
      case DataType::kDouble: {
        const double d = v;
        std::memcpy(dst, &d, 8);
        break;
      }
      case DataType::kHalf: {
        const uint16_t h = FloatToHalf(v);
        std::memcpy(dst, &h, 2);
        break;
      }
      case DataType::kBFloat16: {
        const uint16_t b = FloatToBf16(v);
        std::memcpy(dst, &b, 2);
        break;
      }
    }
  }
  return CudaStatusToAbsl(
      cudaMemcpy(buffer.get(), host.data(), host.size(), cudaMemcpyHostToDevice),
      "cudaMemcpy(fill)");
}

int CudnnConv::AlgoCount() const {
  switch (problem_.op) {
    case ConvOp::kForward:
      return CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
    case ConvOp::kBackwardData:
      return CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
    case ConvOp::kBackwardFilter:
      return CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
  }
  return 0;
}

int64_t CudnnConv::BufferBytes() const {
  return static_cast<int64_t>(x_.bytes() + w_.bytes() + y_.bytes());
}

absl::Status CudnnConv::SetMath(MathType math) {
  return CudnnStatusToAbsl(
      cudnnSetConvolutionMathType(conv_desc_.get(), ToCudnn(math)),
      "cudnnSetConvolutionMathType");
}

namespace {

template <typename Perf>
CudnnConv::Entry ToEntry(const Perf& perf, MathType math) {
  CudnnConv::Entry e;
  e.algo = static_cast<int>(perf.algo);
  e.status = perf.status;
  e.time_ms = perf.time;
  e.memory = static_cast<int64_t>(perf.memory);
  e.deterministic = perf.determinism == CUDNN_DETERMINISTIC;
  e.math = math;
  e.reported_math = FromCudnn(perf.mathType);
  return e;
}

}  // namespace

absl::StatusOr<std::vector<CudnnConv::Entry>> CudnnConv::Find(
    MathType math, void* workspace, size_t workspace_bytes) {
  RETURN_IF_ERROR(SetMath(math));
  RETURN_IF_ERROR(CudnnStatusToAbsl(cudnnSetStream(handle_, stream_),
                                    "cudnnSetStream"));
  std::vector<Entry> out;
  int returned = 0;
  const int count = AlgoCount();
  switch (problem_.op) {
    case ConvOp::kForward: {
      std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(count);
      RETURN_IF_ERROR(CudnnStatusToAbsl(
          cudnnFindConvolutionForwardAlgorithmEx(
              handle_, x_desc_.get(), x_.get(), w_desc_.get(), w_.get(),
              conv_desc_.get(), y_desc_.get(), y_.get(), count, &returned,
              perf.data(), workspace, workspace_bytes),
          "cudnnFindConvolutionForwardAlgorithmEx"));
      for (int i = 0; i < returned; ++i) out.push_back(ToEntry(perf[i], math));
      break;
    }
    case ConvOp::kBackwardData: {
      std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(count);
      RETURN_IF_ERROR(CudnnStatusToAbsl(
          cudnnFindConvolutionBackwardDataAlgorithmEx(
              handle_, w_desc_.get(), w_.get(), y_desc_.get(), y_.get(),
              conv_desc_.get(), x_desc_.get(), x_.get(), count, &returned,
              perf.data(), workspace, workspace_bytes),
          "cudnnFindConvolutionBackwardDataAlgorithmEx"));
      for (int i = 0; i < returned; ++i) out.push_back(ToEntry(perf[i], math));
      break;
    }
    case ConvOp::kBackwardFilter: {
      std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(count);
      RETURN_IF_ERROR(CudnnStatusToAbsl(
          cudnnFindConvolutionBackwardFilterAlgorithmEx(
              handle_, x_desc_.get(), x_.get(), y_desc_.get(), y_.get(),
              conv_desc_.get(), w_desc_.get(), w_.get(), count, &returned,
              perf.data(), workspace, workspace_bytes),
          "cudnnFindConvolutionBackwardFilterAlgorithmEx"));
      for (int i = 0; i < returned; ++i) out.push_back(ToEntry(perf[i], math));
      break;
    }
  }
  return out;
}

absl::StatusOr<std::vector<CudnnConv::Entry>> CudnnConv::Heuristic(
    MathType math) {
  RETURN_IF_ERROR(SetMath(math));
  std::vector<Entry> out;
  int returned = 0;
  const int count = AlgoCount();
  switch (problem_.op) {
    case ConvOp::kForward: {
      std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(count);
      RETURN_IF_ERROR(CudnnStatusToAbsl(
          cudnnGetConvolutionForwardAlgorithm_v7(
              handle_, x_desc_.get(), w_desc_.get(), conv_desc_.get(),
              y_desc_.get(), count, &returned, perf.data()),
          "cudnnGetConvolutionForwardAlgorithm_v7"));
      for (int i = 0; i < returned; ++i) out.push_back(ToEntry(perf[i], math));
      break;
    }
    case ConvOp::kBackwardData: {
      std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(count);
      RETURN_IF_ERROR(CudnnStatusToAbsl(
          cudnnGetConvolutionBackwardDataAlgorithm_v7(
              handle_, w_desc_.get(), y_desc_.get(), conv_desc_.get(),
              x_desc_.get(), count, &returned, perf.data()),
          "cudnnGetConvolutionBackwardDataAlgorithm_v7"));
      for (int i = 0; i < returned; ++i) out.push_back(ToEntry(perf[i], math));
      break;
    }
    case ConvOp::kBackwardFilter: {
      std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(count);
      RETURN_IF_ERROR(CudnnStatusToAbsl(
          cudnnGetConvolutionBackwardFilterAlgorithm_v7(
              handle_, x_desc_.get(), y_desc_.get(), conv_desc_.get(),
              w_desc_.get(), count, &returned, perf.data()),
          "cudnnGetConvolutionBackwardFilterAlgorithm_v7"));
      for (int i = 0; i < returned; ++i) out.push_back(ToEntry(perf[i], math));
      break;
    }
  }
  return out;
}

absl::StatusOr<int64_t> CudnnConv::WorkspaceSize(int algo, MathType math) {
  RETURN_IF_ERROR(SetMath(math));
  size_t bytes = 0;
  switch (problem_.op) {
    case ConvOp::kForward:
      RETURN_IF_ERROR(CudnnStatusToAbsl(
          cudnnGetConvolutionForwardWorkspaceSize(
              handle_, x_desc_.get(), w_desc_.get(), conv_desc_.get(),
              y_desc_.get(), static_cast<cudnnConvolutionFwdAlgo_t>(algo),
              &bytes),
          "cudnnGetConvolutionForwardWorkspaceSize"));
      break;
    case ConvOp::kBackwardData:
      RETURN_IF_ERROR(CudnnStatusToAbsl(
          cudnnGetConvolutionBackwardDataWorkspaceSize(
              handle_, w_desc_.get(), y_desc_.get(), conv_desc_.get(),
              x_desc_.get(), static_cast<cudnnConvolutionBwdDataAlgo_t>(algo),
              &bytes),
          "cudnnGetConvolutionBackwardDataWorkspaceSize"));
      break;
    case ConvOp::kBackwardFilter:
      RETURN_IF_ERROR(CudnnStatusToAbsl(
          cudnnGetConvolutionBackwardFilterWorkspaceSize(
              handle_, x_desc_.get(), y_desc_.get(), conv_desc_.get(),
              w_desc_.get(),
              static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), &bytes),
          "cudnnGetConvolutionBackwardFilterWorkspaceSize"));
      break;
  }
  return static_cast<int64_t>(bytes);
}

absl::Status CudnnConv::Run(int algo, MathType math, void* workspace,
                            size_t workspace_bytes) {
  RETURN_IF_ERROR(SetMath(math));
  RETURN_IF_ERROR(CudnnStatusToAbsl(cudnnSetStream(handle_, stream_),
                                    "cudnnSetStream"));
  const float alpha_f = 1.0f, beta_f = 0.0f;
  const double alpha_d = 1.0, beta_d = 0.0;
  const bool dbl = problem_.input_type == DataType::kDouble;
  const void* alpha = dbl ? static_cast<const void*>(&alpha_d) : &alpha_f;
  const void* beta = dbl ? static_cast<const void*>(&beta_d) : &beta_f;
  switch (problem_.op) {
    case ConvOp::kForward:
      return CudnnStatusToAbsl(
          cudnnConvolutionForward(
              handle_, alpha, x_desc_.get(), x_.get(), w_desc_.get(), w_.get(),
              conv_desc_.get(), static_cast<cudnnConvolutionFwdAlgo_t>(algo),
              workspace, workspace_bytes, beta, y_desc_.get(), y_.get()),
          "cudnnConvolutionForward");
    case ConvOp::kBackwardData:
      return CudnnStatusToAbsl(
          cudnnConvolutionBackwardData(
              handle_, alpha, w_desc_.get(), w_.get(), y_desc_.get(), y_.get(),
              conv_desc_.get(),
              static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), workspace,
              workspace_bytes, beta, x_desc_.get(), x_.get()),
          "cudnnConvolutionBackwardData");
    case ConvOp::kBackwardFilter:
      return CudnnStatusToAbsl(
          cudnnConvolutionBackwardFilter(
              handle_, alpha, x_desc_.get(), x_.get(), y_desc_.get(), y_.get(),
              conv_desc_.get(),
              static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), workspace,
              workspace_bytes, beta, w_desc_.get(), w_.get()),
          "cudnnConvolutionBackwardFilter");
  }
  return absl::InvalidArgumentError("unknown op");
}

absl::StatusOr<std::vector<float>> CudnnConv::ReadBuffer(
    const DeviceBuffer& buffer, int64_t elems) {
  RETURN_IF_ERROR(
      CudaStatusToAbsl(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"));
  const int elem = DataTypeBytes(problem_.input_type);
  std::vector<unsigned char> raw(static_cast<size_t>(elems) * elem);
  RETURN_IF_ERROR(CudaStatusToAbsl(
      cudaMemcpy(raw.data(), buffer.get(), raw.size(), cudaMemcpyDeviceToHost),
      "cudaMemcpy(read)"));
  std::vector<float> out(static_cast<size_t>(elems));
  for (int64_t i = 0; i < elems; ++i) {
    const unsigned char* src = raw.data() + i * elem;
    switch (problem_.input_type) {
      case DataType::kFloat:
        std::memcpy(&out[i], src, 4);
        break;
      case DataType::kDouble: {
        double d;
        std::memcpy(&d, src, 8);
        out[i] = static_cast<float>(d);
        break;
      }
      case DataType::kHalf: {
        uint16_t h;
        std::memcpy(&h, src, 2);
        out[i] = HalfToFloat(h);
        break;
      }
      case DataType::kBFloat16: {
        uint16_t b;
        std::memcpy(&b, src, 2);
        out[i] = Bf16ToFloat(b);
        break;
      }
    }
  }
  return out;
}

absl::StatusOr<std::vector<float>> CudnnConv::ReadOutput() {
  switch (problem_.op) {
    case ConvOp::kForward:
      return ReadBuffer(y_, y_elems_);
    case ConvOp::kBackwardData:
      return ReadBuffer(x_, x_elems_);
    case ConvOp::kBackwardFilter:
      return ReadBuffer(w_, w_elems_);
  }
  return absl::InvalidArgumentError("unknown op");
}

int64_t CudnnConv::MultiplyAccumulates() const {
  const ConvProblem& p = problem_;
  int64_t macs = p.n * p.k * (p.c / p.groups);
  for (int i = 0; i < p.spatial_dims; ++i) {
    macs *= p.OutputSize(i) * p.filter[i];
  }
  return macs;
}

absl::StatusOr<std::vector<float>> CudnnConv::CpuReference(int64_t max_macs) {
  const ConvProblem& p = problem_;
  if (MultiplyAccumulates() > max_macs) {
    return absl::FailedPreconditionError(
        absl::StrCat("problem too large for the CPU reference (",
                     MultiplyAccumulates(), " > ", max_macs, " MACs)"));
  }
  // Inputs of the pass, as floats in memory order (never overwritten by it).
  std::vector<float> x, w, y;
  if (p.op != ConvOp::kBackwardData) {
    ASSIGN_OR_RETURN(x, ReadBuffer(x_, x_elems_));
  }
  if (p.op != ConvOp::kBackwardFilter) {
    ASSIGN_OR_RETURN(w, ReadBuffer(w_, w_elems_));
  }
  if (p.op != ConvOp::kForward) {
    ASSIGN_OR_RETURN(y, ReadBuffer(y_, y_elems_));
  }
  const int nsp = p.spatial_dims;
  const bool channels_last = IsChannelsLast(p.layout);
  // Spatial extents padded to 3 dimensions (leading unused ones of size 1).
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, flt[3] = {1, 1, 1};
  int64_t st[3] = {1, 1, 1}, pd[3] = {0, 0, 0}, dl[3] = {1, 1, 1};
  int64_t out_sp[3] = {0, 0, 0};
  for (int i = 0; i < nsp; ++i) {
    const int j = 3 - nsp + i;
    in[j] = p.input[i];
    out[j] = p.OutputSize(i);
    out_sp[i] = out[j];
    flt[j] = p.filter[i];
    st[j] = p.stride[i];
    pd[j] = p.padding[i];
    dl[j] = p.dilation[i];
  }
  std::vector<int> dims, xs, ys;
  ActivationDims(p.n, p.c, p.input.data(), nsp, channels_last, dims, xs);
  ActivationDims(p.n, p.k, out_sp, nsp, channels_last, dims, ys);
  // Strides padded the same way: [n, c, s0, s1, s2].
  auto pad_strides = [&](const std::vector<int>& s) {
    std::array<int64_t, 5> r = {s[0], s[1], 0, 0, 0};
    for (int i = 0; i < nsp; ++i) r[2 + 3 - nsp + i] = s[2 + i];
    return r;
  };
  const std::array<int64_t, 5> xst = pad_strides(xs), yst = pad_strides(ys);
  const int64_t cg = p.c / p.groups, kg = p.k / p.groups;
  // Filter [k, c/g, f0, f1, f2] packed in KCRS or KRSC order.
  std::array<int64_t, 5> wst{};
  if (!channels_last) {
    wst = {cg * flt[0] * flt[1] * flt[2], flt[0] * flt[1] * flt[2],
           flt[1] * flt[2], flt[2], 1};
  } else {
    wst = {cg * flt[0] * flt[1] * flt[2], 1, flt[1] * flt[2] * cg,
           flt[2] * cg, cg};
  }
  const bool flip = p.mode == ConvMode::kConvolution;
  std::vector<double> acc(p.op == ConvOp::kForward        ? y_elems_
                          : p.op == ConvOp::kBackwardData ? x_elems_
                                                          : w_elems_,
                          0.0);
  for (int64_t n = 0; n < p.n; ++n) {
    for (int64_t k = 0; k < p.k; ++k) {
      const int64_t g = k / kg;
      for (int64_t o0 = 0; o0 < out[0]; ++o0) {
        for (int64_t o1 = 0; o1 < out[1]; ++o1) {
          for (int64_t o2 = 0; o2 < out[2]; ++o2) {
            const int64_t yi = n * yst[0] + k * yst[1] + o0 * yst[2] +
                               o1 * yst[3] + o2 * yst[4];
            double sum = 0;
            for (int64_t ci = 0; ci < cg; ++ci) {
              const int64_t c = g * cg + ci;
              for (int64_t f0 = 0; f0 < flt[0]; ++f0) {
                const int64_t i0 = o0 * st[0] - pd[0] + f0 * dl[0];
                if (i0 < 0 || i0 >= in[0]) continue;
                for (int64_t f1 = 0; f1 < flt[1]; ++f1) {
                  const int64_t i1 = o1 * st[1] - pd[1] + f1 * dl[1];
                  if (i1 < 0 || i1 >= in[1]) continue;
                  for (int64_t f2 = 0; f2 < flt[2]; ++f2) {
                    const int64_t i2 = o2 * st[2] - pd[2] + f2 * dl[2];
                    if (i2 < 0 || i2 >= in[2]) continue;
                    const int64_t xi = n * xst[0] + c * xst[1] + i0 * xst[2] +
                                       i1 * xst[3] + i2 * xst[4];
                    const int64_t g0 = flip ? flt[0] - 1 - f0 : f0;
                    const int64_t g1 = flip ? flt[1] - 1 - f1 : f1;
                    const int64_t g2 = flip ? flt[2] - 1 - f2 : f2;
                    const int64_t wi = k * wst[0] + ci * wst[1] + g0 * wst[2] +
                                       g1 * wst[3] + g2 * wst[4];
                    switch (p.op) {
                      case ConvOp::kForward:
                        sum += static_cast<double>(x[xi]) * w[wi];
                        break;
                      case ConvOp::kBackwardData:
                        acc[xi] += static_cast<double>(y[yi]) * w[wi];
                        break;
                      case ConvOp::kBackwardFilter:
                        acc[wi] += static_cast<double>(x[xi]) * y[yi];
                        break;
                    }
                  }
                }
              }
            }
            if (p.op == ConvOp::kForward) acc[yi] = sum;
          }
        }
      }
    }
  }
  return std::vector<float>(acc.begin(), acc.end());
}

absl::StatusOr<std::unique_ptr<RunTimer>> RunTimer::Create(
    CudnnConv* conv, cudaStream_t stream, int algo, MathType math,
    void* workspace, size_t workspace_bytes, int batch) {
  std::unique_ptr<RunTimer> t(new RunTimer());
  t->conv_ = conv;
  t->stream_ = stream;
  t->algo_ = algo;
  t->math_ = math;
  t->workspace_ = workspace;
  t->workspace_bytes_ = workspace_bytes;
  t->batch_ = std::max(batch, 1);
  // Settle descriptor state (math type, stream) outside the capture.
  RETURN_IF_ERROR(conv->Run(algo, math, workspace, workspace_bytes));
  RETURN_IF_ERROR(CudaStatusToAbsl(cudaStreamSynchronize(stream),
                                   "cudaStreamSynchronize"));
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed) !=
      cudaSuccess) {
    cudaGetLastError();
    return t;  // direct launches
  }
  absl::Status run_status;
  for (int i = 0; i < t->batch_ && run_status.ok(); ++i) {
    run_status = conv->Run(algo, math, workspace, workspace_bytes);
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t end = cudaStreamEndCapture(stream, &graph);
  cudaGraphExec_t exec = nullptr;
  if (run_status.ok() && end == cudaSuccess && graph != nullptr &&
      cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess) {
    t->exec_ = exec;
  }
  if (graph != nullptr) cudaGraphDestroy(graph);
  cudaGetLastError();  // a refused capture leaves a non-sticky error
  if (t->exec_ != nullptr) {
    // One replay to check it runs; otherwise fall back to direct launches.
    if (cudaGraphLaunch(t->exec_, stream) != cudaSuccess ||
        cudaStreamSynchronize(stream) != cudaSuccess) {
      const cudaError_t err = cudaGetLastError();
      if (IsCudaStickyError(err)) return CudaStatusToAbsl(err, "graph replay");
      cudaGraphExecDestroy(t->exec_);
      t->exec_ = nullptr;
    }
  }
  return t;
}

RunTimer::~RunTimer() {
  if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
}

absl::Status RunTimer::Launch() {
  if (exec_ != nullptr) {
    return CudaStatusToAbsl(cudaGraphLaunch(exec_, stream_), "cudaGraphLaunch");
  }
  for (int i = 0; i < batch_; ++i) {
    RETURN_IF_ERROR(conv_->Run(algo_, math_, workspace_, workspace_bytes_));
  }
  return absl::OkStatus();
}

absl::StatusOr<double> RunTimer::Sample(cudaEvent_t start, cudaEvent_t stop) {
  RETURN_IF_ERROR(
      CudaStatusToAbsl(cudaEventRecord(start, stream_), "cudaEventRecord"));
  RETURN_IF_ERROR(Launch());
  RETURN_IF_ERROR(
      CudaStatusToAbsl(cudaEventRecord(stop, stream_), "cudaEventRecord"));
  RETURN_IF_ERROR(
      CudaStatusToAbsl(cudaEventSynchronize(stop), "cudaEventSynchronize"));
  float ms = 0;
  RETURN_IF_ERROR(CudaStatusToAbsl(cudaEventElapsedTime(&ms, start, stop),
                                   "cudaEventElapsedTime"));
  return static_cast<double>(ms) / batch_;
}

}  // namespace tunedb
