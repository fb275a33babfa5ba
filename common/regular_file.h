// Reading and replacing a small file that a user names (a pin): the reader
// opens without blocking and refuses anything that is not a regular file (a
// device, a FIFO, a directory) or is over a byte bound, before reading a
// byte; the writer follows a symbolic link to its target and replaces the
// target whole (a temporary file in its folder, fsync, rename), so a reader
// sees the old file or the new one, and the link stays a link.
//
// Thread safety: functions without shared state.
#ifndef TUNEDB_COMMON_REGULAR_FILE_H_
#define TUNEDB_COMMON_REGULAR_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tunedb {

// The whole of the regular file `path` (symbolic links followed). NOT_FOUND
// if there is none; FAILED_PRECONDITION for a directory, a device, a FIFO or
// a socket ("is a directory, not a file"); RESOURCE_EXHAUSTED for a file
// over `max_bytes`; other errors as the system gave them. Never waits on a
// FIFO or a device.
absl::StatusOr<std::string> ReadRegularFile(const std::string& path,
                                            int64_t max_bytes);

// Where writing `path` lands: `path` itself, or, for a symbolic link (a
// chain of them), the file it names (relative links read from the link's
// folder). INVALID_ARGUMENT for a loop of links.
absl::StatusOr<std::string> LinkTarget(const std::string& path);

// Replaces LinkTarget(path) whole by `text`. FAILED_PRECONDITION when the
// target exists and is not a regular file (nothing is written);
// RESOURCE_EXHAUSTED for a full disk or quota, PERMISSION_DENIED for a
// read-only or forbidden folder, INTERNAL otherwise: each says the path
// and the system's reason. A failed write leaves the old file as it was.
absl::Status ReplaceRegularFile(const std::string& path,
                                const std::string& text);

}  // namespace tunedb

#endif  // TUNEDB_COMMON_REGULAR_FILE_H_
