// Transaction: a scoped SQLite transaction (after Chromium's
// sql::Transaction). Begin() opens it, Commit() ends it; if it was begun and
// not committed, the destructor rolls it back, so every early return of an
// error leaves the database unchanged.
//
// kImmediate (BEGIN IMMEDIATE) takes the write lock at once, so a writer
// waits for other writers in the busy handler at Begin() rather than failing
// with SQLITE_BUSY halfway through. kDeferred (BEGIN) gives readers one
// consistent snapshot across several statements.
//
// Thread safety: not thread-safe; lives on the stack of the thread that holds
// its Database.
#ifndef TUNEDB_STORE_SQL_TRANSACTION_H_
#define TUNEDB_STORE_SQL_TRANSACTION_H_

#include "absl/status/status.h"

namespace tunedb::sql {

class Database;

class Transaction {
 public:
  enum class Kind { kDeferred, kImmediate };

  Transaction(Database* db, Kind kind);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  // Rolls back unless committed.
  ~Transaction();

  absl::Status Begin();
  absl::Status Commit();
  // Rolls back now (the destructor does it otherwise).
  absl::Status Rollback();

  bool is_open() const { return open_; }

 private:
  Database* db_;
  Kind kind_;
  bool open_ = false;
};

}  // namespace tunedb::sql

#endif  // TUNEDB_STORE_SQL_TRANSACTION_H_
