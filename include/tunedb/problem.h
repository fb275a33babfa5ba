// The tunedb key: which device and which convolution a stored search is for.
//
// A ProblemKey is a DeviceKey (GPU model, compute capability, SM count, cuDNN
// and CUDA runtime versions) plus a ConvProblem (op, shapes, types, layout,
// math policy). It has a canonical text form that parses back exactly, e.g.
//
//   kv=1 gpu=NVIDIA%20H200 cc=9.0 sms=132 cudnn=9.19.0 cuda=13.0 op=fwd n=64
//   c=3 k=64 in=224x224 filt=7x7 pad=3x3 stride=2x2 dil=1x1 groups=1
//   mode=xcorr in_type=f32 out_type=f32 compute=f32 layout=nchw tc=1 tf32=1
//
// (one line), and a 64-bit hash of that text. A problem for cuDNN's graph
// (backend) API ends in " api=graph align=16" (the operands' pointer
// alignment class, in bytes); legacy-API problems have no api field, so
// keys stored before the graph API keep their text and hash. `kv` is the key-format version:
// when the meaning of a field changes, kKeyFormatVersion is raised and rows
// stored under older versions are never served again.
//
// Thread safety: plain values; const methods are safe to call concurrently.
#ifndef TUNEDB_PROBLEM_H_
#define TUNEDB_PROBLEM_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunedb {

// Raise when the meaning of any key field changes.
inline constexpr int kKeyFormatVersion = 1;

enum class ConvOp { kForward = 1, kBackwardData = 2, kBackwardFilter = 3 };
enum class DataType { kFloat = 1, kHalf = 2, kBFloat16 = 3, kDouble = 4 };
enum class Layout { kNCHW = 1, kNHWC = 2, kNCDHW = 3, kNDHWC = 4 };
enum class ConvMode { kCrossCorrelation = 1, kConvolution = 2 };
// Which cuDNN API a problem is tuned for: the legacy algorithm API
// (cudnnConvolution*, cudnnFind*) or the graph API (engine configs and
// execution plans, cudnnBackend*).
enum class ConvApi { kLegacy = 1, kGraph = 2 };

// Short names used in the text form: "fwd", "bwd_data", "bwd_filter";
// "f32", "f16", "bf16", "f64"; "nchw", "nhwc", "ncdhw", "ndhwc";
// "xcorr", "conv"; "legacy", "graph".
absl::string_view ConvOpName(ConvOp op);
absl::string_view DataTypeName(DataType t);
absl::string_view LayoutName(Layout l);
absl::string_view ConvModeName(ConvMode m);
absl::string_view ConvApiName(ConvApi a);
absl::StatusOr<ConvOp> ParseConvOp(absl::string_view s);
absl::StatusOr<DataType> ParseDataType(absl::string_view s);
absl::StatusOr<Layout> ParseLayout(absl::string_view s);
absl::StatusOr<ConvMode> ParseConvMode(absl::string_view s);
absl::StatusOr<ConvApi> ParseConvApi(absl::string_view s);
// Number of spatial dimensions of a layout (2 or 3).
int LayoutSpatialDims(Layout l);
// True for NHWC and NDHWC (channels innermost).
bool IsChannelsLast(Layout l);
// The layout with `spatial_dims` (2 or 3) spatial sizes, channels last or
// first.
Layout LayoutFor(bool channels_last, int spatial_dims);
// Size in bytes of one element.
int DataTypeBytes(DataType t);

// The device half of the key. Two GPUs with equal keys share results.
struct DeviceKey {
  // The longest gpu_model Validate accepts, in bytes (CUDA's own names are
  // under 100).
  static constexpr size_t kMaxGpuModelBytes = 256;

  std::string gpu_model;  // e.g. "NVIDIA H200"
  int cc_major = 0;       // compute capability
  int cc_minor = 0;
  int sm_count = 0;              // multiprocessors (MIG slices differ)
  int cudnn_version = 0;         // cudnnGetVersion(), e.g. 91900 = 9.19.0
  int cuda_runtime_version = 0;  // cudaRuntimeGetVersion(), e.g. 13000

  absl::Status Validate() const;
  // "gpu=NVIDIA%20H200 cc=9.0 sms=132 cudnn=9.19.0 cuda=13.0"
  std::string ToText() const;
  static absl::StatusOr<DeviceKey> Parse(absl::string_view text);

  friend bool operator==(const DeviceKey& a, const DeviceKey& b) {
    return a.gpu_model == b.gpu_model && a.cc_major == b.cc_major &&
           a.cc_minor == b.cc_minor && a.sm_count == b.sm_count &&
           a.cudnn_version == b.cudnn_version &&
           a.cuda_runtime_version == b.cuda_runtime_version;
  }
  friend bool operator!=(const DeviceKey& a, const DeviceKey& b) {
    return !(a == b);
  }
};

// "9.19.0" for 91900 (cuDNN 9 encoding: major*10000 + minor*100 + patch).
std::string CudnnVersionText(int version);
// "13.0" for 13000 (CUDA encoding: major*1000 + minor*10).
std::string CudaVersionText(int version);

// The convolution half of the key. Spatial arrays hold `spatial_dims` values
// (H, W or D, H, W); the unused tail stays zero.
struct ConvProblem {
  static constexpr int kMaxSpatialDims = 3;
  using Dims = std::array<int64_t, kMaxSpatialDims>;

  ConvOp op = ConvOp::kForward;
  int spatial_dims = 2;
  int64_t n = 0;  // batch
  int64_t c = 0;  // input channels
  int64_t k = 0;  // output channels
  Dims input{};   // input spatial sizes
  Dims filter{};  // filter spatial sizes
  Dims padding{};
  Dims stride{};
  Dims dilation{};
  int64_t groups = 1;
  ConvMode mode = ConvMode::kCrossCorrelation;
  DataType input_type = DataType::kFloat;
  DataType output_type = DataType::kFloat;
  DataType compute_type = DataType::kFloat;
  Layout layout = Layout::kNCHW;
  bool allow_tensor_cores = true;
  bool allow_tf32 = true;  // meaningful for fp32 only; false otherwise
  ConvApi api = ConvApi::kLegacy;
  // Graph API only (0 for legacy): the byte alignment every operand pointer
  // has, a power of two from the element size to 16 (cuDNN's
  // CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT; plans built for 16 may assume it).
  int alignment = 0;
  static constexpr int kMaxAlignment = 16;

  // OK, or INVALID_ARGUMENT naming the offending field.
  absl::Status Validate() const;
  // Output spatial size along dimension i (may be < 1 for invalid problems).
  int64_t OutputSize(int i) const;
  // Element counts of x, w and y. Call only on validated problems.
  int64_t InputElements() const;
  int64_t FilterElements() const;
  int64_t OutputElements() const;
  // "op=fwd n=64 c=3 ... tf32=1" (then " api=graph align=16" for graph)
  std::string ToText() const;
  static absl::StatusOr<ConvProblem> Parse(absl::string_view text);

  friend bool operator==(const ConvProblem& a, const ConvProblem& b);
  friend bool operator!=(const ConvProblem& a, const ConvProblem& b) {
    return !(a == b);
  }
};

// A whole key.
struct ProblemKey {
  DeviceKey device;
  ConvProblem problem;

  absl::Status Validate() const;
  // "kv=1 <device text> <problem text>"
  std::string ToText() const;
  // 64-bit FNV-1a of ToText().
  uint64_t Hash() const;
  // Hash() as 16 lowercase hex digits.
  std::string HashText() const;
  // Parses and validates; a missing, repeated or unknown field, a wrong key
  // format version, or an inconsistent problem is INVALID_ARGUMENT.
  static absl::StatusOr<ProblemKey> Parse(absl::string_view text);

  friend bool operator==(const ProblemKey& a, const ProblemKey& b) {
    return a.device == b.device && a.problem == b.problem;
  }
};

// The alignment class of pointers `ptrs`: the largest power of two up to
// ConvProblem::kMaxAlignment that divides every address.
int AlignmentClass(std::initializer_list<const void*> ptrs);

}  // namespace tunedb

#endif  // TUNEDB_PROBLEM_H_
