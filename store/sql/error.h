// SqliteStatus: the one place where a SQLite result code becomes an
// absl::Status. Everything in store/sql/ reports errors through it, so the
// mapping from SQLite codes to canonical codes is defined once:
//
//   SQLITE_FULL, SQLITE_CORRUPT, SQLITE_NOTADB, SQLITE_READONLY,
//   SQLITE_CANTOPEN                      -> FAILED_PRECONDITION
//   SQLITE_BUSY, SQLITE_LOCKED           -> UNAVAILABLE (retry later)
//   SQLITE_CONSTRAINT, SQLITE_MISMATCH, SQLITE_TOOBIG
//                                        -> INVALID_ARGUMENT
//   SQLITE_PERM, SQLITE_AUTH             -> PERMISSION_DENIED
//   SQLITE_INTERRUPT                     -> CANCELLED
//   anything else (SQLITE_IOERR, SQLITE_ERROR, SQLITE_MISUSE, ...)
//                                        -> INTERNAL
//
// Thread safety: a free function; `db` must not be used concurrently by
// another thread while its error message is read.
#ifndef TUNEDB_STORE_SQL_ERROR_H_
#define TUNEDB_STORE_SQL_ERROR_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

struct sqlite3;

namespace tunedb::sql {

// A non-OK status for result code `rc` (SQLITE_OK, SQLITE_ROW and SQLITE_DONE
// give OK). The message is "<context>: <sqlite message> (SQLite code N)";
// the SQLite message is taken from `db` when it is not null. SQLITE_FULL's
// also names SQLite's temporary folder and its free space (a full TMPDIR
// fails writes of a database whose own disk has room).
absl::Status SqliteStatus(int rc, sqlite3* db, absl::string_view context);

}  // namespace tunedb::sql

#endif  // TUNEDB_STORE_SQL_ERROR_H_
