// Database: one SQLite connection (after Chromium's sql::Database).
//
// Owns the sqlite3 handle and a cache of prepared statements keyed by their
// SQL text: GetCachedStatement prepares a statement the first time and hands
// out the same one afterwards (one user at a time). Every SQLite error leaves
// through Error(), which adds the file path to SqliteStatus's message.
//
// Thread safety: not thread-safe. A Database is used by one thread at a time
// (the store's write mutex or read-connection pool ensures this); it is
// opened with SQLITE_OPEN_NOMUTEX.
#ifndef TUNEDB_STORE_SQL_DATABASE_H_
#define TUNEDB_STORE_SQL_DATABASE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "store/sql/statement.h"

struct sqlite3;
struct sqlite3_stmt;

namespace tunedb::sql {

class Database {
 public:
  enum class Mode {
    kReadWriteCreate,  // SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
    kReadWrite,        // SQLITE_OPEN_READWRITE (the file must exist)
    kReadOnly,         // SQLITE_OPEN_READONLY
  };

  // Opens `path` (a file name, ":memory:", or a "file:" URI) and sets the
  // busy timeout. Extended result codes are on.
  static absl::StatusOr<std::unique_ptr<Database>> Open(const std::string& path,
                                                        Mode mode,
                                                        int busy_timeout_ms);

  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  // Finalizes cached statements and closes the connection.
  ~Database();

  // Runs one or more statements; rows they return are ignored.
  absl::Status Execute(absl::string_view sql);
  // The prepared statement for `sql`, prepared on first use and reused.
  // FAILED_PRECONDITION if that statement is already in use.
  absl::StatusOr<Statement> GetCachedStatement(absl::string_view sql);
  // A statement prepared for one use (SQL built at run time, pragmas).
  absl::StatusOr<Statement> GetUniqueStatement(absl::string_view sql);
  // Runs a query whose first row's first column is an integer (pragmas,
  // COUNT(*)); NOT_FOUND if it returns no row.
  absl::StatusOr<int64_t> QueryInt64(absl::string_view sql);

  // True while a transaction is open on this connection.
  bool InTransaction() const;
  // Rows changed by the last INSERT, UPDATE or DELETE.
  int64_t Changes() const;

  // SqliteStatus for `rc`, with the path and `context` in the message.
  absl::Status Error(int rc, absl::string_view context) const;

  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }

 private:
  struct CachedStatement {
    sqlite3_stmt* stmt = nullptr;
    bool in_use = false;
  };

  Database(std::string path, sqlite3* db);
  absl::StatusOr<sqlite3_stmt*> Prepare(absl::string_view sql, bool persistent);

  std::string path_;
  sqlite3* db_;
  // Node-based, so the in_use flags handed to Statements stay put.
  std::unordered_map<std::string, CachedStatement> cache_;
};

}  // namespace tunedb::sql

#endif  // TUNEDB_STORE_SQL_DATABASE_H_
