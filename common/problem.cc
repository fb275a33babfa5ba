#include "tunedb/problem.h"

#include <array>
#include <cctype>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/data_type_traits.h"
#include "common/enum_names.h"
#include "common/key_fields.h"
#include "common/math_policy.h"
#include "common/status_macros.h"
#include "common/valid_key.h"
#include "common/version_text.h"

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

// Text escaping for free-form values (the GPU model): every byte outside
// [A-Za-z0-9._()-] becomes %XX, so values never contain spaces or '='.
void AppendEscaped(absl::string_view s, std::string* out) {
  for (unsigned char ch : s) {
    if (std::isalnum(ch) || ch == '.' || ch == '_' || ch == '-' || ch == '(' ||
        ch == ')') {
      out->push_back(static_cast<char>(ch));
    } else {
      absl::StrAppendFormat(out, "%%%02X", ch);
    }
  }
}

absl::StatusOr<std::string> Unescape(absl::string_view s) {
  auto hex = [](char ch) -> int {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    if (i + 2 >= s.size() || hex(s[i + 1]) < 0 || hex(s[i + 2]) < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad %-escape in '", s, "'"));
    }
    out.push_back(static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2])));
    i += 2;
  }
  return out;
}

absl::Status FieldError(absl::string_view field, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", message));
}

// Calls visit(name, raw value) for each "name=value" token of a text form
// (tokens separated by spaces, tabs or newlines), stopping at its first
// error; a token that is not name=value is INVALID_ARGUMENT.
template <typename Visit>
absl::Status ForEachToken(absl::string_view text, Visit visit) {
  for (absl::string_view token :
       absl::StrSplit(text, absl::ByAnyChar(" \t\n"), absl::SkipEmpty())) {
    const size_t eq = token.find('=');
    if (eq == absl::string_view::npos || eq == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("malformed token '", token, "' (expected name=value)"));
    }
    RETURN_IF_ERROR(visit(token.substr(0, eq), token.substr(eq + 1)));
  }
  return absl::OkStatus();
}

// Ordered fields of a text form: "name=value" tokens separated by spaces.
class Fields {
 public:
  static absl::StatusOr<Fields> Split(absl::string_view text) {
    Fields f;
    RETURN_IF_ERROR(ForEachToken(
        text, [&f](absl::string_view name, absl::string_view value) {
          auto [it, added] =
              f.values_.emplace(std::string(name), std::string(value));
          if (!added) return FieldError(name, "given twice");
          return absl::OkStatus();
        }));
    return f;
  }

  bool Has(absl::string_view name) const {
    return values_.count(std::string(name)) != 0;
  }

  // Removes and returns a field's raw value.
  absl::StatusOr<std::string> Take(absl::string_view name) {
    auto it = values_.find(std::string(name));
    if (it == values_.end()) return FieldError(name, "missing");
    std::string v = std::move(it->second);
    values_.erase(it);
    return v;
  }

  absl::StatusOr<int64_t> TakeInt(absl::string_view name) {
    ASSIGN_OR_RETURN(std::string v, Take(name));
    int64_t out;
    if (!absl::SimpleAtoi(v, &out)) {
      const bool digits =
          !v.empty() &&
          v.find_first_not_of("0123456789", v[0] == '-' ? 1 : 0) ==
              std::string::npos &&
          v != "-";
      return FieldError(
          name, absl::StrCat("'", v, "' ",
                             digits ? "is out of range" : "is not an integer"));
    }
    return out;
  }

  absl::StatusOr<bool> TakeBool(absl::string_view name) {
    ASSIGN_OR_RETURN(std::string v, Take(name));
    if (v == "1") return true;
    if (v == "0") return false;
    return FieldError(name, absl::StrCat("'", v, "' is not 0 or 1"));
  }

  // "224x224" -> {224, 224}; sets *count to the number of values.
  absl::StatusOr<ConvProblem::Dims> TakeDims(absl::string_view name,
                                             int* count) {
    ASSIGN_OR_RETURN(std::string v, Take(name));
    ConvProblem::Dims dims{};
    std::vector<absl::string_view> parts = absl::StrSplit(v, 'x');
    if (parts.empty() || parts.size() > ConvProblem::kMaxSpatialDims) {
      return FieldError(name, absl::StrCat("'", v, "' needs 1 to 3 sizes"));
    }
    for (size_t i = 0; i < parts.size(); ++i) {
      if (!absl::SimpleAtoi(parts[i], &dims[i])) {
        return FieldError(name,
                          absl::StrCat("'", v, "' is not sizes like 3x3"));
      }
    }
    *count = static_cast<int>(parts.size());
    return dims;
  }

  // (major, minor[, patch]) from "9.0" / "9.19.0".
  absl::StatusOr<std::vector<int>> TakeVersion(absl::string_view name,
                                               size_t parts_wanted) {
    ASSIGN_OR_RETURN(std::string v, Take(name));
    absl::StatusOr<std::vector<int>> numbers = VersionNumbers(v, parts_wanted);
    if (!numbers.ok()) return FieldError(name, numbers.status().message());
    return numbers;
  }

  // cuDNN's version number from "9.19.0" (ParseCudnnVersion).
  absl::StatusOr<int> TakeCudnnVersion(absl::string_view name) {
    ASSIGN_OR_RETURN(std::string v, Take(name));
    absl::StatusOr<int> version = ParseCudnnVersion(v);
    if (!version.ok()) return FieldError(name, version.status().message());
    return version;
  }

  absl::Status ExpectEmpty() const {
    if (!values_.empty()) {
      return FieldError(values_.begin()->first, "unknown field");
    }
    return absl::OkStatus();
  }

 private:
  std::map<std::string, std::string> values_;
};

void AppendDims(const ConvProblem::Dims& d, int n, std::string* out) {
  for (int i = 0; i < n; ++i) {
    if (i) out->push_back('x');
    absl::StrAppend(out, d[i]);
  }
}

absl::StatusOr<DeviceKey> ParseDeviceFields(Fields& f) {
  DeviceKey d;
  ASSIGN_OR_RETURN(std::string gpu, f.Take("gpu"));
  ASSIGN_OR_RETURN(d.gpu_model, Unescape(gpu));
  ASSIGN_OR_RETURN(std::vector<int> cc, f.TakeVersion("cc", 2));
  d.cc_major = cc[0];
  d.cc_minor = cc[1];
  ASSIGN_OR_RETURN(int64_t sms, f.TakeInt("sms"));
  if (sms < 0 || sms > std::numeric_limits<int>::max()) {
    return FieldError("sms", "out of range");
  }
  d.sm_count = static_cast<int>(sms);
  ASSIGN_OR_RETURN(d.cudnn_version, f.TakeCudnnVersion("cudnn"));
  ASSIGN_OR_RETURN(std::vector<int> cuda, f.TakeVersion("cuda", 2));
  if (cuda[1] > 99) return FieldError("cuda", "minor must be below 100");
  // Computed wide: a major version too large for an int once encoded is out
  // of range, not an overflow.
  const int64_t cuda_version = int64_t{cuda[0]} * 1000 + cuda[1] * 10;
  if (cuda_version > std::numeric_limits<int>::max()) {
    return FieldError("cuda", "out of range");
  }
  d.cuda_runtime_version = static_cast<int>(cuda_version);
  return d;
}

absl::StatusOr<ConvProblem> ParseProblemFields(Fields& f) {
  ConvProblem p;
  ASSIGN_OR_RETURN(std::string op, f.Take("op"));
  ASSIGN_OR_RETURN(p.op, ParseConvOp(op));
  ASSIGN_OR_RETURN(p.n, f.TakeInt("n"));
  ASSIGN_OR_RETURN(p.c, f.TakeInt("c"));
  ASSIGN_OR_RETURN(p.k, f.TakeInt("k"));
  int dims = 0, count = 0;
  ASSIGN_OR_RETURN(p.input, f.TakeDims("in", &dims));
  p.spatial_dims = dims;
  struct {
    const char* name;
    ConvProblem::Dims* dst;
  } arrays[] = {{"filt", &p.filter},
                {"pad", &p.padding},
                {"stride", &p.stride},
                {"dil", &p.dilation}};
  for (auto& a : arrays) {
    ASSIGN_OR_RETURN(*a.dst, f.TakeDims(a.name, &count));
    if (count != dims) {
      return FieldError(
          a.name, absl::StrCat("has ", count, " sizes but 'in' has ", dims));
    }
  }
  ASSIGN_OR_RETURN(p.groups, f.TakeInt("groups"));
  ASSIGN_OR_RETURN(std::string mode, f.Take("mode"));
  ASSIGN_OR_RETURN(p.mode, ParseConvMode(mode));
  ASSIGN_OR_RETURN(std::string in_type, f.Take("in_type"));
  ASSIGN_OR_RETURN(p.input_type, ParseDataType(in_type));
  ASSIGN_OR_RETURN(std::string out_type, f.Take("out_type"));
  ASSIGN_OR_RETURN(p.output_type, ParseDataType(out_type));
  ASSIGN_OR_RETURN(std::string compute, f.Take("compute"));
  ASSIGN_OR_RETURN(p.compute_type, ParseDataType(compute));
  ASSIGN_OR_RETURN(std::string layout, f.Take("layout"));
  ASSIGN_OR_RETURN(p.layout, ParseLayout(layout));
  ASSIGN_OR_RETURN(p.allow_tensor_cores, f.TakeBool("tc"));
  ASSIGN_OR_RETURN(p.allow_tf32, f.TakeBool("tf32"));
  if (f.Has("api")) {
    ASSIGN_OR_RETURN(std::string api, f.Take("api"));
    ASSIGN_OR_RETURN(p.api, ParseConvApi(api));
  }
  if (p.api == ConvApi::kGraph) {
    ASSIGN_OR_RETURN(int64_t align, f.TakeInt("align"));
    if (align < 0 || align > ConvProblem::kMaxAlignment) {
      return FieldError("align", absl::StrCat(align, " is out of range"));
    }
    p.alignment = static_cast<int>(align);
  }
  return p;
}

// Parses a whole text form: `parse_fields` takes the fields it knows from
// the split text; a field left over is an error, and the value must pass
// its Validate().
template <typename T, typename ParseFields>
absl::StatusOr<T> ParseText(absl::string_view text, ParseFields parse_fields) {
  ASSIGN_OR_RETURN(Fields f, Fields::Split(text));
  ASSIGN_OR_RETURN(T value, parse_fields(f));
  RETURN_IF_ERROR(f.ExpectEmpty());
  RETURN_IF_ERROR(value.Validate());
  return value;
}

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

std::string CudnnVersionText(int v) {
  return absl::StrCat(v / 10000, ".", (v / 100) % 100, ".", v % 100);
}

std::string CudaVersionText(int v) {
  return absl::StrCat(v / 1000, ".", (v % 1000) / 10);
}

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

namespace {

// The text of DeviceKey::ToText and ConvProblem::ToText, appended to `out`
// in place: a key's text (made for every Lookup) is built in one string.
void AppendDeviceText(const DeviceKey& d, std::string* out) {
  out->append("gpu=");
  AppendEscaped(d.gpu_model, out);
  absl::StrAppend(out, " cc=", d.cc_major, ".", d.cc_minor,
                  " sms=", d.sm_count,
                  " cudnn=", CudnnVersionText(d.cudnn_version),
                  " cuda=", CudaVersionText(d.cuda_runtime_version));
}

void AppendProblemText(const ConvProblem& p, std::string* out) {
  const int d = p.spatial_dims >= 1 && p.spatial_dims <= ConvProblem::kMaxSpatialDims
                    ? p.spatial_dims
                    : 0;
  absl::StrAppend(out, "op=", ConvOpName(p.op), " n=", p.n, " c=", p.c,
                  " k=", p.k, " in=");
  AppendDims(p.input, d, out);
  out->append(" filt=");
  AppendDims(p.filter, d, out);
  out->append(" pad=");
  AppendDims(p.padding, d, out);
  out->append(" stride=");
  AppendDims(p.stride, d, out);
  out->append(" dil=");
  AppendDims(p.dilation, d, out);
  absl::StrAppend(out, " groups=", p.groups, " mode=", ConvModeName(p.mode),
                  " in_type=", DataTypeName(p.input_type),
                  " out_type=", DataTypeName(p.output_type),
                  " compute=", DataTypeName(p.compute_type),
                  " layout=", LayoutName(p.layout),
                  " tc=", p.allow_tensor_cores ? 1 : 0,
                  " tf32=", p.allow_tf32 ? 1 : 0);
  if (p.api == ConvApi::kGraph) {
    absl::StrAppend(out, " api=graph align=", p.alignment);
  }
}

}  // namespace

std::string DeviceKey::ToText() const {
  std::string out;
  out.reserve(96);
  AppendDeviceText(*this, &out);
  return out;
}

absl::StatusOr<DeviceKey> DeviceKey::Parse(absl::string_view text) {
  return ParseText<DeviceKey>(text, ParseDeviceFields);
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

std::string ConvProblem::ToText() const {
  std::string out;
  out.reserve(224);
  AppendProblemText(*this, &out);
  return out;
}

absl::StatusOr<ConvProblem> ConvProblem::Parse(absl::string_view text) {
  return ParseText<ConvProblem>(text, ParseProblemFields);
}

// --- ProblemKey ----------------------------------------------------------

absl::Status ProblemKey::Validate() const {
  RETURN_IF_ERROR(device.Validate());
  return problem.Validate();
}

std::string ProblemKey::ToText() const {
  std::string out;
  out.reserve(320);
  absl::StrAppend(&out, "kv=", kKeyFormatVersion, " ");
  AppendDeviceText(device, &out);
  out.push_back(' ');
  AppendProblemText(problem, &out);
  return out;
}

uint64_t ProblemKey::Hash() const { return KeyTextHash(ToText()); }

std::string ProblemKey::HashText() const { return KeyHashText(Hash()); }

absl::StatusOr<ProblemKey> ProblemKey::Parse(absl::string_view text) {
  return ParseText<ProblemKey>(
      text, [](Fields& f) -> absl::StatusOr<ProblemKey> {
        ASSIGN_OR_RETURN(int64_t kv, f.TakeInt("kv"));
        if (kv != kKeyFormatVersion) {
          return FieldError("kv", absl::StrCat("key format version ", kv,
                                               " is not the current version ",
                                               kKeyFormatVersion));
        }
        ProblemKey key;
        ASSIGN_OR_RETURN(key.device, ParseDeviceFields(f));
        ASSIGN_OR_RETURN(key.problem, ParseProblemFields(f));
        return key;
      });
}

absl::StatusOr<std::map<std::string, std::string>> KeyFields(
    absl::string_view text) {
  std::map<std::string, std::string> out;
  RETURN_IF_ERROR(ForEachToken(
      text,
      [&out](absl::string_view name, absl::string_view raw) -> absl::Status {
        ASSIGN_OR_RETURN(std::string value, Unescape(raw));
        out[std::string(name)] = std::move(value);
        return absl::OkStatus();
      }));
  return out;
}

const std::array<absl::string_view, 25>& KeyFieldNames() {
  static const std::array<absl::string_view, 25> kNames = {
      "kv",      "gpu",    "cc",       "sms",     "cudnn",  "cuda", "op",
      "n",       "c",      "k",        "in",      "filt",   "pad",  "stride",
      "dil",     "groups", "mode",     "in_type", "out_type", "compute",
      "layout",  "tc",     "tf32",     "api",     "align"};
  return kNames;
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
