// ConvProblem, DeviceKey and ProblemKey as values: the enums' names, the
// layouts' and data types' facts, sizes and Validate. Their text form is
// key_text.cc.
#include "tunedb/problem.h"

#include <array>
#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/data_type_traits.h"
#include "common/enum_names.h"
#include "common/field_error.h"
#include "common/math_policy.h"
#include "common/status_macros.h"

namespace tunedb {
namespace {

constexpr EnumNames<ConvOp, 3> kOps("op", {{{ConvOp::kForward, "fwd"},
                                            {ConvOp::kBackwardData, "bwd_data"},
                                            {ConvOp::kBackwardFilter,
                                             "bwd_filter"}}});
// The data types' names, from their traits table.
constexpr std::array<EnumName<DataType>, kDataTypeTraits.size()>
DataTypeNames() {
  std::array<EnumName<DataType>, kDataTypeTraits.size()> names{};
  for (size_t i = 0; i < names.size(); ++i) {
    names[i] = {kDataTypeTraits[i].type, kDataTypeTraits[i].name};
  }
  return names;
}
constexpr EnumNames<DataType, kDataTypeTraits.size()> kTypes("data type",
                                                             DataTypeNames());
constexpr EnumNames<Layout, 4> kLayouts("layout",
                                        {{{Layout::kNCHW, "nchw"},
                                          {Layout::kNHWC, "nhwc"},
                                          {Layout::kNCDHW, "ncdhw"},
                                          {Layout::kNDHWC, "ndhwc"}}});
constexpr EnumNames<ConvMode, 2> kModes(
    "mode", {{{ConvMode::kCrossCorrelation, "xcorr"},
              {ConvMode::kConvolution, "conv"}}});
constexpr EnumNames<ConvApi, 2> kApis("api", {{{ConvApi::kLegacy, "legacy"},
                                               {ConvApi::kGraph, "graph"}}});

// a * b into *out, false on int64 overflow (operands are positive).
bool MulOk(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

}  // namespace

absl::string_view ConvOpName(ConvOp op) { return kOps.Name(op); }
absl::string_view DataTypeName(DataType t) { return kTypes.Name(t); }
absl::string_view LayoutName(Layout l) { return kLayouts.Name(l); }
absl::string_view ConvModeName(ConvMode m) { return kModes.Name(m); }
absl::string_view ConvApiName(ConvApi a) { return kApis.Name(a); }
absl::StatusOr<ConvApi> ParseConvApi(absl::string_view s) {
  return kApis.Parse(s);
}
absl::StatusOr<ConvOp> ParseConvOp(absl::string_view s) {
  return kOps.Parse(s);
}
absl::StatusOr<DataType> ParseDataType(absl::string_view s) {
  return kTypes.Parse(s);
}
absl::StatusOr<Layout> ParseLayout(absl::string_view s) {
  return kLayouts.Parse(s);
}
absl::StatusOr<ConvMode> ParseConvMode(absl::string_view s) {
  return kModes.Parse(s);
}

int LayoutSpatialDims(Layout l) {
  return (l == Layout::kNCDHW || l == Layout::kNDHWC) ? 3 : 2;
}

bool IsChannelsLast(Layout l) {
  return l == Layout::kNHWC || l == Layout::kNDHWC;
}

Layout LayoutFor(bool channels_last, int spatial_dims) {
  if (spatial_dims == 3) return channels_last ? Layout::kNDHWC : Layout::kNCDHW;
  return channels_last ? Layout::kNHWC : Layout::kNCHW;
}

int DataTypeBytes(DataType t) { return DataTypeTraitsOf(t).bytes; }

// --- DeviceKey -----------------------------------------------------------

absl::Status DeviceKey::Validate() const {
  if (gpu_model.empty()) return FieldError("gpu", "empty GPU model");
  if (gpu_model.size() > kMaxGpuModelBytes) {
    return FieldError("gpu", absl::StrCat("GPU model of ", gpu_model.size(),
                                          " bytes, at most ",
                                          kMaxGpuModelBytes, " allowed"));
  }
  if (cc_major <= 0 || cc_minor < 0 || cc_minor > 9) {
    return FieldError(
        "cc", absl::StrCat("bad compute capability ", cc_major, ".", cc_minor));
  }
  if (sm_count <= 0) return FieldError("sms", "must be positive");
  if (cudnn_version <= 0) return FieldError("cudnn", "must be positive");
  if (cuda_runtime_version <= 0 || cuda_runtime_version % 10 != 0) {
    return FieldError("cuda", absl::StrCat("bad CUDA runtime version ",
                                           cuda_runtime_version));
  }
  return absl::OkStatus();
}

// --- ConvProblem ---------------------------------------------------------

bool operator==(const ConvProblem& a, const ConvProblem& b) {
  return a.op == b.op && a.spatial_dims == b.spatial_dims && a.n == b.n &&
         a.c == b.c && a.k == b.k && a.input == b.input &&
         a.filter == b.filter && a.padding == b.padding &&
         a.stride == b.stride && a.dilation == b.dilation &&
         a.groups == b.groups && a.mode == b.mode &&
         a.input_type == b.input_type && a.output_type == b.output_type &&
         a.compute_type == b.compute_type && a.layout == b.layout &&
         a.allow_tensor_cores == b.allow_tensor_cores &&
         a.allow_tf32 == b.allow_tf32 && a.api == b.api &&
         a.alignment == b.alignment;
}

int64_t ConvProblem::OutputSize(int i) const {
  // Computed in a wider type: inputs are bounded by Validate() but this may
  // be called before validation.
  __int128 in = input[i], pad = padding[i], dil = dilation[i], f = filter[i],
           s = stride[i];
  if (s <= 0) return 0;
  __int128 span = in + 2 * pad - dil * (f - 1) - 1;
  if (span < 0) return 0;
  return static_cast<int64_t>(span / s + 1);
}

namespace {

// The enumerations are known values and the layout has the problem's rank.
absl::Status ValidateKinds(const ConvProblem& p) {
  if (!kOps.Contains(p.op)) return FieldError("op", "unknown op");
  if (!kModes.Contains(p.mode)) return FieldError("mode", "unknown mode");
  if (!kTypes.Contains(p.input_type)) {
    return FieldError("in_type", "unknown type");
  }
  if (!kTypes.Contains(p.output_type)) {
    return FieldError("out_type", "unknown type");
  }
  if (!kTypes.Contains(p.compute_type)) {
    return FieldError("compute", "unknown type");
  }
  if (!kLayouts.Contains(p.layout)) {
    return FieldError("layout", "unknown layout");
  }
  if (p.spatial_dims != 2 && p.spatial_dims != 3) {
    return FieldError("in", absl::StrCat("2 or 3 spatial sizes required, got ",
                                         p.spatial_dims));
  }
  if (LayoutSpatialDims(p.layout) != p.spatial_dims) {
    return FieldError("layout", absl::StrCat(LayoutName(p.layout), " is for ",
                                             LayoutSpatialDims(p.layout),
                                             "-D problems but the problem is ",
                                             p.spatial_dims, "-D"));
  }
  return absl::OkStatus();
}

// Every count and spatial size is within its bounds (at most 2^31-1), and
// the spatial sizes beyond the rank are 0.
absl::Status ValidateSizes(const ConvProblem& p) {
  constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();
  struct {
    const char* name;
    int64_t value;
    int64_t min;
  } scalars[] = {
      {"n", p.n, 1}, {"c", p.c, 1}, {"k", p.k, 1}, {"groups", p.groups, 1}};
  for (const auto& s : scalars) {
    if (s.value < s.min) {
      return FieldError(s.name,
                        absl::StrCat("must be >= ", s.min, ", got ", s.value));
    }
    if (s.value > kMaxDim) {
      return FieldError(s.name, absl::StrCat(s.value, " exceeds 2^31-1"));
    }
  }
  struct {
    const char* name;
    const ConvProblem::Dims* dims;
    int64_t min;
  } arrays[] = {{"in", &p.input, 1},
                {"filt", &p.filter, 1},
                {"pad", &p.padding, 0},
                {"stride", &p.stride, 1},
                {"dil", &p.dilation, 1}};
  for (const auto& a : arrays) {
    for (int i = 0; i < ConvProblem::kMaxSpatialDims; ++i) {
      int64_t v = (*a.dims)[i];
      if (i >= p.spatial_dims) {
        if (v != 0) {
          return FieldError(a.name, "has a value beyond the spatial rank");
        }
        continue;
      }
      if (v < a.min) {
        return FieldError(a.name, absl::StrCat("must be >= ", a.min, ", got ",
                                               v, " in dimension ", i));
      }
      if (v > kMaxDim) {
        return FieldError(a.name, absl::StrCat(v, " exceeds 2^31-1"));
      }
    }
  }
  return absl::OkStatus();
}

// The groups divide the channels, every output size is at least 1, and the
// element counts of input, filter and output (and their byte sizes) fit in
// int64.
absl::Status ValidateShape(const ConvProblem& p) {
  if (p.c % p.groups != 0) {
    return FieldError("groups",
                      absl::StrCat(p.groups, " does not divide c=", p.c));
  }
  if (p.k % p.groups != 0) {
    return FieldError("groups",
                      absl::StrCat(p.groups, " does not divide k=", p.k));
  }
  for (int i = 0; i < p.spatial_dims; ++i) {
    if (p.OutputSize(i) < 1) {
      return FieldError(
          "in", absl::StrCat("output size below 1 in dimension ", i, " (input ",
                             p.input[i], ", filter ", p.filter[i], ", padding ",
                             p.padding[i], ", dilation ", p.dilation[i], ")"));
    }
  }
  struct {
    const char* name;
    int64_t a, b;
    const ConvProblem::Dims* dims;
    bool output;
  } tensors[] = {{"in", p.n, p.c, &p.input, false},
                 {"filt", p.k, p.c / p.groups, &p.filter, false},
                 {"in", p.n, p.k, nullptr, true}};
  for (const auto& t : tensors) {
    int64_t count;
    if (!MulOk(t.a, t.b, &count)) {
      return FieldError(t.name, "element count overflows");
    }
    for (int i = 0; i < p.spatial_dims; ++i) {
      int64_t d = t.output ? p.OutputSize(i) : (*t.dims)[i];
      if (!MulOk(count, d, &count)) {
        return FieldError(t.name, "element count overflows");
      }
    }
    if (!MulOk(count, 8, &count)) {
      return FieldError(t.name, "byte size overflows");
    }
  }
  return absl::OkStatus();
}

// x, w and y share one type (as cuDNN wants), the compute type suits it, and
// TF32 is asked only for f32 data with tensor cores.
absl::Status ValidateTypes(const ConvProblem& p) {
  if (p.output_type != p.input_type) {
    return FieldError("out_type", "must equal in_type");
  }
  if (!ComputeTypeAllowed(p.input_type, p.compute_type)) {
    const DataTypeTraits& t = DataTypeTraitsOf(p.input_type);
    std::string computes;
    for (int i = 0; i < t.compute_count; ++i) {
      absl::StrAppend(&computes, i > 0 ? " or " : "",
                      DataTypeName(t.computes[static_cast<size_t>(i)]));
    }
    return FieldError(
        "compute", absl::StrCat(t.name, " data needs ", computes, " compute"));
  }
  if (p.allow_tf32 && !IsTf32Type(p.input_type)) {
    return FieldError("tf32", "may be 1 only for f32 data");
  }
  if (p.allow_tf32 && !p.allow_tensor_cores) {
    return FieldError("tf32", "TF32 needs tensor cores (tc=1)");
  }
  return absl::OkStatus();
}

// A known API; an alignment class only for the graph API, a power of two
// from the element size to kMaxAlignment.
absl::Status ValidateApi(const ConvProblem& p) {
  if (!kApis.Contains(p.api)) return FieldError("api", "unknown api");
  if (p.api == ConvApi::kLegacy) {
    if (p.alignment != 0) {
      return FieldError("align", "is for graph-API problems only");
    }
  } else if (p.alignment < DataTypeBytes(p.input_type) ||
             p.alignment > ConvProblem::kMaxAlignment ||
             (p.alignment & (p.alignment - 1)) != 0) {
    return FieldError(
        "align",
        absl::StrCat(p.alignment, " is not a power of two from ",
                     DataTypeBytes(p.input_type), " (the element size) to ",
                     ConvProblem::kMaxAlignment));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ConvProblem::Validate() const {
  RETURN_IF_ERROR(ValidateKinds(*this));
  RETURN_IF_ERROR(ValidateSizes(*this));
  RETURN_IF_ERROR(ValidateShape(*this));
  RETURN_IF_ERROR(ValidateTypes(*this));
  return ValidateApi(*this);
}

int64_t ConvProblem::InputElements() const {
  int64_t v = n * c;
  for (int i = 0; i < spatial_dims; ++i) v *= input[i];
  return v;
}

int64_t ConvProblem::FilterElements() const {
  int64_t v = k * (c / groups);
  for (int i = 0; i < spatial_dims; ++i) v *= filter[i];
  return v;
}

int64_t ConvProblem::OutputElements() const {
  int64_t v = n * k;
  for (int i = 0; i < spatial_dims; ++i) v *= OutputSize(i);
  return v;
}

// --- ProblemKey ----------------------------------------------------------

absl::Status ProblemKey::Validate() const {
  RETURN_IF_ERROR(device.Validate());
  return problem.Validate();
}

int AlignmentClass(std::initializer_list<const void*> ptrs) {
  int align = ConvProblem::kMaxAlignment;
  for (const void* p : ptrs) {
    const auto address = reinterpret_cast<uintptr_t>(p);
    while (align > 1 && address % align != 0) align /= 2;
  }
  return align;
}

}  // namespace tunedb
