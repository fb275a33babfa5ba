// Fuzz target: shape files (tuner/shape_file.cc) in every format. The first
// byte picks the format (auto, JSON lines, CSV, key text) and the command
// line's defaults; the rest is the file. Properties: every problem read is
// valid and its text parses back to it; the errors stay within the limit;
// and the problems read, written out as a key-text file, read back as the
// same problems and devices without an error.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "tests/fuzz/fuzz_check.h"
#include "tunedb/problem.h"
#include "tuner/shape_file.h"

using tunedb::ConvProblem;
using tunedb::tuner::ParseShapeFile;
using tunedb::tuner::ShapeFileResult;
using tunedb::tuner::ShapeFormat;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  constexpr ShapeFormat kFormats[] = {ShapeFormat::kAuto,
                                      ShapeFormat::kJsonLines,
                                      ShapeFormat::kCsv, ShapeFormat::kKeyText};
  const ShapeFormat format = kFormats[data[0] & 3];
  tunedb::tuner::ProblemOptions defaults;
  defaults.channels_last = (data[0] & 4) != 0;
  if (data[0] & 8) defaults.ops = {tunedb::ConvOp::kForward};
  if (data[0] & 16) defaults.dtype = tunedb::tuner::DtypePreset::kFp16;
  constexpr size_t kMaxErrors = 5;
  std::istringstream in(
      std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
  const ShapeFileResult result =
      ParseShapeFile("fuzz", in, format, defaults, kMaxErrors);

  FUZZ_CHECK(result.errors.size() <= kMaxErrors + 1);
  std::string keys;  // the entries as a key-text file
  for (const tunedb::tuner::ShapeEntry& entry : result.entries) {
    FUZZ_CHECK(entry.problem.Validate().ok());
    absl::StatusOr<ConvProblem> again =
        ConvProblem::Parse(entry.problem.ToText());
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(*again == entry.problem);
    if (entry.device) {
      FUZZ_CHECK(entry.device->Validate().ok());
      keys += tunedb::ProblemKey{*entry.device, entry.problem}.ToText();
    } else {
      keys += entry.problem.ToText();
    }
    keys += '\n';
  }
  std::istringstream written(keys);
  const ShapeFileResult reread = ParseShapeFile(
      "written", written, ShapeFormat::kKeyText, defaults, kMaxErrors);
  FUZZ_CHECK(reread.errors.empty());
  FUZZ_CHECK(reread.entries.size() == result.entries.size());
  for (size_t i = 0; i < reread.entries.size(); ++i) {
    FUZZ_CHECK(reread.entries[i].problem == result.entries[i].problem);
    FUZZ_CHECK(reread.entries[i].device == result.entries[i].device);
  }
  return 0;
}
