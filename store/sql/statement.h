// Statement: one prepared SQLite statement in use (after Chromium's
// sql::Statement).
//
// A Statement comes from Database::GetCachedStatement (the prepared statement
// is owned by the Database and reused; destroying the Statement resets it and
// clears its bindings) or Database::GetUniqueStatement (owned; finalized on
// destruction). Parameters are bound by their 1-based SQLite index (write
// `?1`, `?2`, ... in the SQL); columns are read by 0-based index. A failed
// Bind is remembered and reported by the next Step or Run.
//
// Thread safety: not thread-safe; used by the thread that holds its Database.
#ifndef TUNEDB_STORE_SQL_STATEMENT_H_
#define TUNEDB_STORE_SQL_STATEMENT_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct sqlite3_stmt;

namespace tunedb::sql {

class Database;

class Statement {
 public:
  // The storage class of a column's value in the current row.
  enum class ColumnType { kInteger, kFloat, kText, kBlob, kNull };

  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  void BindInt64(int index, int64_t value);
  void BindInt(int index, int value) { BindInt64(index, value); }
  void BindBool(int index, bool value) { BindInt64(index, value ? 1 : 0); }
  void BindDouble(int index, double value);
  // The text is copied (SQLITE_TRANSIENT).
  void BindText(int index, absl::string_view value);
  void BindNull(int index);
  // Bytes as a BLOB, copied (SQLITE_TRANSIENT).
  void BindBlob(int index, absl::string_view bytes);

  // Advances: true when a row is available, false when the statement is done.
  absl::StatusOr<bool> Step();
  // Steps to completion, ignoring any rows (for statements without results).
  absl::Status Run();
  // Makes the statement runnable again; bindings are kept.
  void Reset();

  int64_t ColumnInt64(int column) const;
  int ColumnInt(int column) const;
  double ColumnDouble(int column) const;
  std::string ColumnText(int column) const;
  // A BLOB (or any value) as its bytes.
  std::string ColumnBlob(int column) const;
  bool ColumnIsNull(int column) const;
  ColumnType GetColumnType(int column) const;

 private:
  friend class Database;
  // `in_use` (may be null) is cleared when a cached statement is released.
  Statement(Database* db, sqlite3_stmt* stmt, bool owned, bool* in_use);
  void Release();
  void NoteBind(int rc, int index);

  Database* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  bool owned_ = false;
  bool* in_use_ = nullptr;
  absl::Status bind_status_;
};

}  // namespace tunedb::sql

#endif  // TUNEDB_STORE_SQL_STATEMENT_H_
