// The key's text form: DeviceKey, ConvProblem and ProblemKey written as
// text and parsed back (their Validate is in problem.cc), KeyFields and the
// version texts of the device key.
#include "tunedb/problem.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/field_error.h"
#include "common/key_fields.h"
#include "common/status_macros.h"
#include "common/valid_key.h"
#include "common/version_text.h"

namespace tunedb {
namespace {

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

// The fields of a text form: "name=value" tokens separated by spaces, as
// views into the text (which must outlive them), sorted by name; a field
// taken is marked, not copied or erased (a key is parsed for every stored
// record a query reads: no allocation per field).
class Fields {
 public:
  static absl::StatusOr<Fields> Split(absl::string_view text) {
    Fields f;
    RETURN_IF_ERROR(ForEachToken(
        text, [&f](absl::string_view name, absl::string_view value) {
          f.values_.push_back({name, value, false});
          return absl::OkStatus();
        }));
    std::sort(f.values_.begin(), f.values_.end(),
              [](const Field& a, const Field& b) { return a.name < b.name; });
    for (size_t i = 1; i < f.values_.size(); ++i) {
      if (f.values_[i].name == f.values_[i - 1].name) {
        return FieldError(f.values_[i].name, "given twice");
      }
    }
    return f;
  }

  bool Has(absl::string_view name) const { return Find(name) != nullptr; }

  // Takes a field's raw value: a second Take of it finds it missing.
  absl::StatusOr<std::string> Take(absl::string_view name) {
    Field* field = Find(name);
    if (field == nullptr) return FieldError(name, "missing");
    field->taken = true;
    return std::string(field->value);
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
    for (const Field& field : values_) {
      if (!field.taken) return FieldError(field.name, "unknown field");
    }
    return absl::OkStatus();
  }

 private:
  struct Field {
    absl::string_view name;
    absl::string_view value;
    bool taken;
  };

  // The field `name` not taken yet, or null.
  Field* Find(absl::string_view name) {
    auto it = std::lower_bound(
        values_.begin(), values_.end(), name,
        [](const Field& f, absl::string_view n) { return f.name < n; });
    if (it == values_.end() || it->name != name || it->taken) return nullptr;
    return &*it;
  }
  const Field* Find(absl::string_view name) const {
    return const_cast<Fields*>(this)->Find(name);
  }

  std::vector<Field> values_;
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
  const int d =
      p.spatial_dims >= 1 && p.spatial_dims <= ConvProblem::kMaxSpatialDims
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

std::string CudnnVersionText(int v) {
  return absl::StrCat(v / 10000, ".", (v / 100) % 100, ".", v % 100);
}

std::string CudaVersionText(int v) {
  return absl::StrCat(v / 1000, ".", (v % 1000) / 10);
}

// --- DeviceKey -----------------------------------------------------------

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

}  // namespace tunedb
