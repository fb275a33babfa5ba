#include "store/sql/error.h"

#include <sqlite3.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"

namespace tunedb::sql {
namespace {

absl::StatusCode CodeFor(int primary) {
  switch (primary) {
    // A full disk is no reason to retry soon: RESOURCE_EXHAUSTED is the
    // API's "queue full, retry later", and a client retrying would search
    // again for nothing.
    case SQLITE_FULL:
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
      return absl::StatusCode::kFailedPrecondition;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::StatusCode::kUnavailable;
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_TOOBIG:
      return absl::StatusCode::kInvalidArgument;
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return absl::StatusCode::kPermissionDenied;
    case SQLITE_INTERRUPT:
      return absl::StatusCode::kCancelled;
    default:
      return absl::StatusCode::kInternal;
  }
}

// The folder SQLite's unix VFS writes its temporary files in (statement
// journals, RETURNING's rows, an import's staging database): the first
// writable folder of SQLITE_TMPDIR, TMPDIR, /var/tmp, /usr/tmp, /tmp, ".".
std::string TemporaryFolder() {
  const char* candidates[] = {std::getenv("SQLITE_TMPDIR"),
                              std::getenv("TMPDIR"), "/var/tmp", "/usr/tmp",
                              "/tmp"};
  for (const char* dir : candidates) {
    if (dir != nullptr && *dir != '\0' && access(dir, W_OK | X_OK) == 0) {
      return dir;
    }
  }
  return ".";
}

// A full disk may be the database's or the temporary folder's: the message
// names the latter and its free space, so that a full TMPDIR is not taken
// for a full database disk.
std::string FullDiskNote() {
  const std::string dir = TemporaryFolder();
  struct statvfs fs;
  if (statvfs(dir.c_str(), &fs) != 0) {
    return absl::StrCat("; SQLite's temporary folder is ", dir);
  }
  const uint64_t free_bytes = uint64_t{fs.f_bavail} * fs.f_frsize;
  return absl::StrCat("; the database's disk, or SQLite's temporary folder ",
                      dir, " (", free_bytes, " bytes free; SQLITE_TMPDIR or "
                      "TMPDIR moves it), is full");
}

}  // namespace

absl::Status SqliteStatus(int rc, sqlite3* db, absl::string_view context) {
  if (rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE) {
    return absl::OkStatus();
  }
  // The connection's message is more specific ("no such table: x") than the
  // generic text of the code, but only while it still describes `rc`.
  std::string message = sqlite3_errstr(rc);
  if (db != nullptr && (sqlite3_extended_errcode(db) & 0xff) == (rc & 0xff)) {
    message = sqlite3_errmsg(db);
  }
  return absl::Status(
      CodeFor(rc & 0xff),
      absl::StrCat(context, ": ", message, " (SQLite code ", rc, ")",
                   (rc & 0xff) == SQLITE_FULL ? FullDiskNote() : ""));
}

}  // namespace tunedb::sql
