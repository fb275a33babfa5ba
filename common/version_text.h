// Version text read into numbers, one rule each: a version's dot-separated
// numbers ("9.19.0" -> 9, 19, 0) and a cuDNN version's text into cuDNN's
// encoding ("9.19.0" -> 91900, the inverse of CudnnVersionText). The key
// parser, the store's filters and the CLI's flags read versions through
// these and keep their own wording around the errors.
//
// Thread safety: pure functions.
#ifndef TUNEDB_COMMON_VERSION_TEXT_H_
#define TUNEDB_COMMON_VERSION_TEXT_H_

#include <cstddef>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunedb {

// The `count` dot-separated non-negative numbers of `text` ("9.0" ->
// {9, 0}). INVALID_ARGUMENT, its message naming no field: "'<text>' is not
// a version" where a part is not such a number, else "'<text>' needs
// <count> dot-separated numbers".
absl::StatusOr<std::vector<int>> VersionNumbers(absl::string_view text,
                                                size_t count);

// cuDNN's encoding of major.minor.patch: major * 10000 + minor * 100 +
// patch. INVALID_ARGUMENT "minor and patch must be below 100", or "out of
// range" where the number does not fit an int. Parts are non-negative.
absl::StatusOr<int> CudnnVersionNumber(int major, int minor, int patch);

// The number of the cuDNN version written MAJOR.MINOR.PATCH ("9.19.0" ->
// 91900): VersionNumbers(text, 3), then CudnnVersionNumber, with their
// errors.
absl::StatusOr<int> ParseCudnnVersion(absl::string_view text);

}  // namespace tunedb

#endif  // TUNEDB_COMMON_VERSION_TEXT_H_
