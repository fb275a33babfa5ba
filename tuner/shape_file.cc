#include "tuner/shape_file.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/enum_names.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace tunedb::tuner {
namespace {

using Row = std::map<std::string, std::string>;  // field -> text value

// --format names; the first of each format is its name.
constexpr EnumNames<ShapeFormat, 7> kShapeFormats(
    "format", {{{ShapeFormat::kAuto, "auto"},
                {ShapeFormat::kJsonLines, "jsonl"},
                {ShapeFormat::kJsonLines, "json"},
                {ShapeFormat::kCsv, "csv"},
                {ShapeFormat::kKeyText, "text"},
                {ShapeFormat::kKeyText, "key"},
                {ShapeFormat::kKeyText, "keys"}}});

const std::set<std::string>& KnownFields() {
  static const auto* fields = new std::set<std::string>{
      "name", "n",      "c",  "k",   "in",    "filt",   "pad", "stride",
      "dil",  "groups", "op", "ops", "dtype", "layout", "mode"};
  return *fields;
}

absl::Status FieldError(const std::string& field, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("field '", field, "': ", why));
}

absl::StatusOr<int64_t> ParseInt(const Row& row, const std::string& field,
                                 int64_t fallback, int64_t min) {
  auto it = row.find(field);
  if (it == row.end() || it->second.empty()) {
    if (fallback < 0) return FieldError(field, "is required");
    return fallback;
  }
  int64_t v = 0;
  if (!absl::SimpleAtoi(it->second, &v)) {
    return FieldError(
        field, absl::StrCat("expected an integer, got '", it->second, "'"));
  }
  if (v < min) {
    return FieldError(field, absl::StrCat("must be >= ", min, ", got ", v));
  }
  return v;
}

// "224x224", "224", "[224, 224]" -> sizes.
absl::StatusOr<std::vector<int64_t>> ParseSizes(const std::string& field,
                                                const std::string& text) {
  std::vector<int64_t> v;
  const std::string stripped(absl::StripAsciiWhitespace(text));
  for (absl::string_view part :
       absl::StrSplit(stripped, absl::ByAnyChar("x,[] "), absl::SkipEmpty())) {
    int64_t x = 0;
    if (!absl::SimpleAtoi(part, &x)) {
      return FieldError(
          field,
          absl::StrCat("expected sizes like 3 or 3x3, got '", text, "'"));
    }
    v.push_back(x);
  }
  if (v.empty()) return FieldError(field, "is empty");
  return v;
}

absl::StatusOr<Dims> ParseDims(const Row& row, const std::string& field,
                               int dims, int64_t fallback, int64_t min) {
  Dims out{};
  auto it = row.find(field);
  if (it == row.end() || it->second.empty()) {
    if (fallback < 0) return FieldError(field, "is required");
    for (int i = 0; i < dims; ++i) out[i] = fallback;
    return out;
  }
  auto sizes = ParseSizes(field, it->second);
  if (!sizes.ok()) return sizes.status();
  if (sizes->size() == 1) sizes->assign(dims, (*sizes)[0]);
  if (static_cast<int>(sizes->size()) != dims) {
    return FieldError(
        field, absl::StrCat("expected 1 or ", dims, " sizes (like 'in'), got ",
                            sizes->size()));
  }
  for (int i = 0; i < dims; ++i) {
    if ((*sizes)[i] < min) {
      return FieldError(
          field, absl::StrCat("must be >= ", min, ", got ", (*sizes)[i]));
    }
    out[i] = (*sizes)[i];
  }
  return out;
}

// Every field of `row` known, and not both 'op' and 'ops'.
absl::Status CheckFields(const Row& row) {
  for (const auto& [field, value] : row) {
    if (KnownFields().count(field) == 0) {
      return FieldError(field,
                        absl::StrCat("unknown field; known: ",
                                     absl::StrJoin(KnownFields().begin(),
                                                   KnownFields().end(), ", ")));
    }
  }
  if (row.count("op") && row.count("ops")) {
    return FieldError("ops", "give 'op' or 'ops', not both");
  }
  return absl::OkStatus();
}

// The sizes: n, c, k, groups and the spatial dims 'in' has (2 or 3).
absl::Status ParseGeometry(const Row& row, const ProblemOptions& defaults,
                           ConvProblem& p) {
  auto in_it = row.find("in");
  if (in_it == row.end() || in_it->second.empty()) {
    return FieldError("in", "is required");
  }
  auto in_sizes = ParseSizes("in", in_it->second);
  if (!in_sizes.ok()) return in_sizes.status();
  const int dims =
      in_sizes->size() == 1 ? 2 : static_cast<int>(in_sizes->size());
  if (dims != 2 && dims != 3) {
    return FieldError("in", absl::StrCat("expected 2 or 3 sizes, got ", dims));
  }
  p.spatial_dims = dims;
  auto n = ParseInt(row, "n", defaults.batch, 1);
  auto c = ParseInt(row, "c", -1, 1);
  auto k = ParseInt(row, "k", -1, 1);
  auto groups = ParseInt(row, "groups", 1, 1);
  auto input = ParseDims(row, "in", dims, -1, 1);
  auto filt = ParseDims(row, "filt", dims, -1, 1);
  auto pad = ParseDims(row, "pad", dims, 0, 0);
  auto stride = ParseDims(row, "stride", dims, 1, 1);
  auto dil = ParseDims(row, "dil", dims, 1, 1);
  for (const absl::Status& s :
       {n.status(), c.status(), k.status(), groups.status(), input.status(),
        filt.status(), pad.status(), stride.status(), dil.status()}) {
    if (!s.ok()) return s;
  }
  p.n = *n;
  p.c = *c;
  p.k = *k;
  p.groups = *groups;
  p.input = *input;
  p.filter = *filt;
  p.padding = *pad;
  p.stride = *stride;
  p.dilation = *dil;
  return absl::OkStatus();
}

// The numeric setup (dtype), the layout and the mode, after the geometry.
absl::Status ParseSetup(const Row& row, const ProblemOptions& defaults,
                        ConvProblem& p) {
  DtypePreset dtype = defaults.dtype;
  if (auto it = row.find("dtype"); it != row.end() && !it->second.empty()) {
    auto parsed = ParseDtypePreset(it->second);
    if (!parsed.ok())
      return FieldError("dtype", std::string(parsed.status().message()));
    dtype = *parsed;
  }
  ApplyDtypePreset(dtype, p);
  const int dims = p.spatial_dims;
  p.layout = LayoutFor(defaults.channels_last, dims);
  if (auto it = row.find("layout"); it != row.end() && !it->second.empty()) {
    auto parsed = ParseLayout(absl::AsciiStrToLower(it->second));
    if (!parsed.ok()) {
      return FieldError(
          "layout",
          absl::StrCat("'", it->second, "' is not nchw, nhwc, ncdhw or ndhwc"));
    }
    if (LayoutSpatialDims(*parsed) != dims) {
      return FieldError(
          "layout",
          absl::StrCat("'", it->second, "' is for ", LayoutSpatialDims(*parsed),
                       "-D problems but 'in' has ", dims, " sizes"));
    }
    p.layout = *parsed;
  }
  if (auto it = row.find("mode"); it != row.end() && !it->second.empty()) {
    auto parsed = ParseConvMode(it->second);
    if (!parsed.ok()) {
      return FieldError(
          "mode", absl::StrCat("'", it->second, "' is not xcorr or conv"));
    }
    p.mode = *parsed;
  }
  return absl::OkStatus();
}

// The passes 'op' or 'ops' names, or the defaults'.
absl::StatusOr<std::vector<ConvOp>> ParseRowOps(
    const Row& row, const ProblemOptions& defaults) {
  std::vector<ConvOp> ops = defaults.ops;
  for (const char* field : {"op", "ops"}) {
    auto it = row.find(field);
    if (it == row.end() || it->second.empty()) continue;
    auto parsed = ParseOps(
        absl::StrReplaceAll(it->second, {{";", ","}, {"|", ","}, {" ", ","}}));
    if (!parsed.ok())
      return FieldError(field, std::string(parsed.status().message()));
    ops = *parsed;
  }
  return ops;
}

// A row of a JSON or CSV file -> problems (one per op).
absl::Status RowToProblems(const Row& row, const ProblemOptions& defaults,
                           std::vector<ConvProblem>* out) {
  RETURN_IF_ERROR(CheckFields(row));
  ConvProblem p;
  RETURN_IF_ERROR(ParseGeometry(row, defaults, p));
  RETURN_IF_ERROR(ParseSetup(row, defaults, p));
  ASSIGN_OR_RETURN(const std::vector<ConvOp> ops, ParseRowOps(row, defaults));
  for (ConvOp op : ops) {
    p.op = op;
    RETURN_IF_ERROR(p.Validate());
    out->push_back(p);
  }
  return absl::OkStatus();
}

absl::StatusOr<Row> JsonToRow(const std::string& line) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded()) return absl::InvalidArgumentError("not valid JSON");
  if (!j.is_object()) {
    return absl::InvalidArgumentError("expected a JSON object per line");
  }
  Row row;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const nlohmann::json& v = it.value();
    std::string text;
    if (v.is_string()) {
      text = v.get<std::string>();
    } else if (v.is_number_integer()) {
      text = absl::StrCat(v.get<int64_t>());
    } else if (v.is_array()) {
      std::vector<std::string> parts;
      for (const nlohmann::json& e : v) {
        if (e.is_number_integer()) {
          parts.push_back(absl::StrCat(e.get<int64_t>()));
        } else if (e.is_string()) {
          parts.push_back(e.get<std::string>());
        } else {
          return FieldError(it.key(),
                            "list entries must be integers or strings");
        }
      }
      // Sizes join with 'x'; op names with ','.
      const bool names = !v.empty() && v[0].is_string();
      text = absl::StrJoin(parts, names ? "," : "x");
      if (text.empty()) return FieldError(it.key(), "is an empty list");
    } else {
      return FieldError(it.key(), absl::StrCat("expected an integer, a string "
                                               "or a list, got ",
                                               v.type_name()));
    }
    row[it.key()] = text;
  }
  return row;
}

// Splits one CSV line (RFC 4180 quoting within the line).
absl::StatusOr<std::vector<std::string>> SplitCsv(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        cells.back() += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      cells.emplace_back();
    } else {
      cells.back() += ch;
    }
  }
  if (quoted) return absl::InvalidArgumentError("unterminated quote");
  for (std::string& c : cells) c = std::string(absl::StripAsciiWhitespace(c));
  return cells;
}

ShapeFormat Sniff(const std::string& name, const std::string& first_line) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (absl::EndsWith(lower, ".jsonl") || absl::EndsWith(lower, ".json") ||
      absl::EndsWith(lower, ".ndjson")) {
    return ShapeFormat::kJsonLines;
  }
  if (absl::EndsWith(lower, ".csv")) return ShapeFormat::kCsv;
  if (absl::EndsWith(lower, ".txt") || absl::EndsWith(lower, ".keys")) {
    return ShapeFormat::kKeyText;
  }
  if (absl::StartsWith(first_line, "{")) return ShapeFormat::kJsonLines;
  if (absl::StartsWith(first_line, "op=") ||
      absl::StartsWith(first_line, "kv=")) {
    return ShapeFormat::kKeyText;
  }
  return ShapeFormat::kCsv;
}

// The key library's messages read "stride: must be >= 1"; give them the same
// "field 'stride': ..." form as this file's own.
std::string NameField(absl::string_view message) {
  const size_t colon = message.find(": ");
  if (colon == absl::string_view::npos || colon == 0 ||
      message.substr(0, colon).find_first_of(" '") != absl::string_view::npos) {
    return std::string(message);
  }
  return absl::StrCat("field '", message.substr(0, colon), "'",
                      message.substr(colon));
}

// A CSV file's column names, from its first line.
struct CsvHeader {
  std::vector<std::string> columns;
  bool read = false;
};

// The header row: lower-cased names of known fields, one of them 'in'.
absl::Status ReadCsvHeader(const std::vector<std::string>& cells,
                           CsvHeader& header) {
  header.columns = cells;
  header.read = true;
  absl::Status status;
  for (size_t i = 0; i < header.columns.size(); ++i) {
    std::string& column = header.columns[i];
    column = absl::AsciiStrToLower(column);
    if (KnownFields().count(column) == 0) {
      status = FieldError(
          column,
          absl::StrCat("unknown column in the header row (column ", i + 1,
                       "); the first line of a CSV file names the columns"));
    }
  }
  const auto& columns = header.columns;
  if (status.ok() &&
      std::find(columns.begin(), columns.end(), "in") == columns.end()) {
    status = FieldError("in", "the header row has no 'in' column");
  }
  return status;
}

// A line of a CSV file: the header (the first, then *is_header) or a row
// under it.
absl::Status CsvLineToProblems(const std::string& line,
                               const ProblemOptions& defaults,
                               CsvHeader& header,
                               std::vector<ConvProblem>* problems,
                               bool* is_header) {
  auto cells = SplitCsv(line);
  if (!cells.ok()) return cells.status();
  if (!header.read) {
    *is_header = true;
    return ReadCsvHeader(*cells, header);
  }
  if (cells->size() != header.columns.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected ", header.columns.size(),
                     " cells like the header, got ", cells->size()));
  }
  Row row;
  for (size_t i = 0; i < header.columns.size(); ++i) {
    if (!(*cells)[i].empty()) row[header.columns[i]] = (*cells)[i];
  }
  return RowToProblems(row, defaults, problems);
}

// A line of key text: a whole key (with its device) or a problem's text.
absl::Status KeyTextToProblems(const std::string& line,
                               std::vector<ConvProblem>* problems,
                               std::optional<DeviceKey>* device) {
  if (absl::StartsWith(line, "kv=")) {
    auto key = ProblemKey::Parse(line);
    if (!key.ok()) return key.status();
    problems->push_back(key->problem);
    *device = key->device;
    return absl::OkStatus();
  }
  auto problem = ConvProblem::Parse(line);
  if (!problem.ok()) return problem.status();
  problems->push_back(*problem);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ShapeFormat> ParseShapeFormat(absl::string_view text) {
  if (std::optional<ShapeFormat> format =
          kShapeFormats.Find(absl::AsciiStrToLower(text))) {
    return *format;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--format '", text, "' is not one of ", kShapeFormats.NameList()));
}

ShapeFileResult ParseShapeFile(const std::string& name, std::istream& in,
                               ShapeFormat format,
                               const ProblemOptions& defaults,
                               size_t max_errors) {
  ShapeFileResult result;
  size_t dropped = 0;
  auto error = [&](int line, const std::string& message) {
    if (result.errors.size() < max_errors) {
      result.errors.push_back(absl::StrCat(name, ":", line, ": ", message));
    } else {
      ++dropped;
    }
  };
  CsvHeader header;
  std::string raw;
  int line_no = 0;
  while (std::getline(in, raw)) {
    ++line_no;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    const std::string line(absl::StripAsciiWhitespace(raw));
    if (line.empty() || line[0] == '#') continue;
    if (format == ShapeFormat::kAuto) format = Sniff(name, line);
    std::vector<ConvProblem> problems;
    std::optional<DeviceKey> device;
    absl::Status status;
    bool is_header = false;
    switch (format) {
      case ShapeFormat::kJsonLines: {
        auto row = JsonToRow(line);
        status =
            row.ok() ? RowToProblems(*row, defaults, &problems) : row.status();
        break;
      }
      case ShapeFormat::kCsv:
        status =
            CsvLineToProblems(line, defaults, header, &problems, &is_header);
        break;
      case ShapeFormat::kKeyText:
      case ShapeFormat::kAuto:
        status = KeyTextToProblems(line, &problems, &device);
        break;
    }
    if (is_header) {
      if (status.ok()) continue;
      error(line_no, std::string(status.message()));
      // Without a usable header no later line can be read.
      result.entries.clear();
      return result;
    }
    if (!status.ok()) {
      error(line_no, NameField(status.message()));
      continue;
    }
    if (format != ShapeFormat::kKeyText) result.uses_defaults = true;
    const std::string source = absl::StrCat(name, ":", line_no);
    for (const ConvProblem& p : problems) {
      result.entries.push_back({p, device, source});
    }
  }
  if (dropped > 0) {
    result.errors.push_back(absl::StrCat("... and ", dropped, " more errors"));
  }
  return result;
}

}  // namespace tunedb::tuner
