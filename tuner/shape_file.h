// Shape files: lists of convolution problems for `tunedb prewarm --file`.
//
// Three formats (docs/shape-files.md): JSON lines, CSV with a header row,
// and lines of the key's canonical text (a ConvProblem's ToText(), or a whole
// ProblemKey's, whose device part then selects the GPU). Blank lines and
// lines starting with '#' are skipped in every format. Fields a JSON or CSV
// line leaves out come from the command line (--batch, --dtype, --layout,
// --ops); one line can expand to several problems (one per op).
//
// Every bad line is reported with its line number and the field at fault,
// e.g. "shapes.csv:7: field 'stride': expected 1 or 2 sizes, got 3".
//
// Thread safety: pure functions.
#ifndef TUNEDB_TUNER_SHAPE_FILE_H_
#define TUNEDB_TUNER_SHAPE_FILE_H_

#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tunedb/problem.h"
#include "tuner/training_problems.h"

namespace tunedb::tuner {

enum class ShapeFormat { kAuto, kJsonLines, kCsv, kKeyText };

// "auto", "jsonl" (or "json"), "csv", "text" (or "key").
absl::StatusOr<ShapeFormat> ParseShapeFormat(absl::string_view text);

struct ShapeEntry {
  ConvProblem problem;
  std::optional<DeviceKey> device;  // from a whole key line
  std::string source;               // "shapes.csv:7"
};

struct ShapeFileResult {
  std::vector<ShapeEntry> entries;
  // "name:line: field 'x': why", in line order (at most `max_errors`, then
  // one "... and N more" line).
  std::vector<std::string> errors;
  // True if some line (JSON or CSV) took a default from the command line;
  // key-text lines are complete and take none.
  bool uses_defaults = false;
};

// Reads `in` (named `name` in messages). kAuto picks by extension (.jsonl,
// .json, .csv, .txt/.keys) or else by the first non-comment line ('{' is
// JSON, "op=" or "kv=" is key text, anything else CSV).
ShapeFileResult ParseShapeFile(const std::string& name, std::istream& in,
                               ShapeFormat format,
                               const ProblemOptions& defaults,
                               size_t max_errors = 50);

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_SHAPE_FILE_H_
