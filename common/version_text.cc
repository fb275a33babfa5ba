#include "common/version_text.h"

#include <cstdint>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"

namespace tunedb {

absl::StatusOr<std::vector<int>> VersionNumbers(absl::string_view text,
                                                size_t count) {
  std::vector<int> out;
  for (absl::string_view part : absl::StrSplit(text, '.')) {
    int x;
    if (!absl::SimpleAtoi(part, &x) || x < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", text, "' is not a version"));
    }
    out.push_back(x);
  }
  if (out.size() != count) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' needs ", count, " dot-separated numbers"));
  }
  return out;
}

absl::StatusOr<int> CudnnVersionNumber(int major, int minor, int patch) {
  if (minor > 99 || patch > 99) {
    return absl::InvalidArgumentError("minor and patch must be below 100");
  }
  // Computed wide: a major version too large for an int once encoded is
  // out of range, not an overflow.
  const int64_t version = int64_t{major} * 10000 + minor * 100 + patch;
  if (version > std::numeric_limits<int>::max()) {
    return absl::InvalidArgumentError("out of range");
  }
  return static_cast<int>(version);
}

absl::StatusOr<int> ParseCudnnVersion(absl::string_view text) {
  ASSIGN_OR_RETURN(std::vector<int> v, VersionNumbers(text, 3));
  return CudnnVersionNumber(v[0], v[1], v[2]);
}

}  // namespace tunedb
