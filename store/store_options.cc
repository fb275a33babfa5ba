#include "store/store_options.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace tunedb {

absl::Status ValidateStoreOptions(const Store::Options& options) {
  if (options.path.empty()) {
    return absl::InvalidArgumentError("store path is empty");
  }
  const std::string sync = absl::AsciiStrToUpper(options.synchronous);
  if (sync != "FULL" && sync != "NORMAL" && sync != "EXTRA") {
    return absl::InvalidArgumentError(
        absl::StrCat("store synchronous must be FULL, NORMAL or EXTRA, not \"",
                     options.synchronous, "\""));
  }
  if (options.busy_timeout_ms < 0) {
    return absl::InvalidArgumentError("store busy_timeout_ms is negative");
  }
  if (options.read_connections < 0) {
    return absl::InvalidArgumentError("store read_connections is negative");
  }
  if (options.file_mode > 0777) {
    return absl::InvalidArgumentError(
        "store file_mode has bits beyond the permissions (0777)");
  }
  if (options.read_only && options.path == ":memory:") {
    return absl::InvalidArgumentError(
        "a read-only store cannot be in memory (it would always be empty)");
  }
  return absl::OkStatus();
}

}  // namespace tunedb
