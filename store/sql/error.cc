#include "store/sql/error.h"

#include <sqlite3.h>

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
      absl::StrCat(context, ": ", message, " (SQLite code ", rc, ")"));
}

}  // namespace tunedb::sql
