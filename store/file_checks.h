// The checks on a database file: before SQLite opens it, what the file
// system says (may it be written, is it on a read-only file system with a
// WAL left behind), asked through an Env; after, what the file holds (the
// bounded check at every open, and the full PRAGMA quick_check).
//
// Internal to tunedb_store. Thread safety: free functions; those on a
// Database need it held exclusively.
#ifndef TUNEDB_STORE_FILE_CHECKS_H_
#define TUNEDB_STORE_FILE_CHECKS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/env.h"
#include "store/sql/database.h"

namespace tunedb {

// Whether `path` names a file on disk, as opposed to ":memory:" or a
// "file:" URI, which the checks below and the file's creation leave to
// SQLite.
bool IsFilePath(const std::string& path);

// Why `path` cannot be opened for writing, where the file system says so
// before SQLite does (SQLite reports only "unable to open database file" or
// "attempt to write a readonly database", with the statement that met it):
// a read-only file system is FAILED_PRECONDITION, a file or folder that may
// not be written PERMISSION_DENIED. OK where nothing stands in the way.
// SQLite also writes the folder: the WAL and its shared-memory index lie
// beside the file.
absl::Status CheckWritable(Env& env, const std::string& path);

// The name a read connection opens `path` by. On a read-only file system
// SQLite cannot create the WAL's shared-memory file beside the database,
// and no process can change the file there, so it is opened as immutable
// (a URI with immutable=1), unless a WAL left behind there holds commits
// the file lacks: that is FAILED_PRECONDITION naming both.
absl::StatusOr<std::string> ReaderName(Env& env, const std::string& path);

// The bounded check run at every open, in place of a full PRAGMA
// quick_check (which reads the whole file: seconds at a million records):
// the records and results tables exist, and for each table and index of the
// file the path from its root to its first and to its last entry reads
// without error. It reads a few pages per b-tree, however many records the
// file holds; damage elsewhere is found by the full check
// (`tunedb doctor --db`) or, as SQLITE_CORRUPT, by the read that meets it.
// FAILED_PRECONDITION naming the file on damage.
absl::Status CheckStoreFile(sql::Database& db);

// The full check: PRAGMA quick_check reads the whole file.
// FAILED_PRECONDITION naming the file and every problem it found.
absl::Status QuickCheckStoreFile(sql::Database& db);

}  // namespace tunedb

#endif  // TUNEDB_STORE_FILE_CHECKS_H_
