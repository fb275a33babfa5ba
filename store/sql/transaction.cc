#include "store/sql/transaction.h"

#include "absl/status/statusor.h"
#include "store/sql/database.h"
#include "store/sql/statement.h"

namespace tunedb::sql {
namespace {

absl::Status RunCached(Database* db, const char* sql) {
  absl::StatusOr<Statement> statement = db->GetCachedStatement(sql);
  if (!statement.ok()) return statement.status();
  return statement->Run();
}

}  // namespace

Transaction::Transaction(Database* db, Kind kind) : db_(db), kind_(kind) {}

Transaction::~Transaction() {
  // A failed rollback leaves nothing to do: SQLite has then already ended the
  // transaction itself (it does so after SQLITE_FULL, SQLITE_IOERR, ...).
  if (open_) Rollback().IgnoreError();
}

absl::Status Transaction::Begin() {
  if (open_) return absl::FailedPreconditionError("transaction already begun");
  absl::Status status = RunCached(
      db_, kind_ == Kind::kImmediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
  if (status.ok()) open_ = true;
  return status;
}

absl::Status Transaction::Commit() {
  if (!open_) return absl::FailedPreconditionError("no transaction to commit");
  absl::Status status = RunCached(db_, "COMMIT");
  // If COMMIT failed but SQLite ended the transaction anyway, there is
  // nothing left to roll back.
  open_ = !status.ok() && db_->InTransaction();
  return status;
}

absl::Status Transaction::Rollback() {
  if (!open_)
    return absl::FailedPreconditionError("no transaction to roll back");
  open_ = false;
  if (!db_->InTransaction()) return absl::OkStatus();
  return RunCached(db_, "ROLLBACK");
}

}  // namespace tunedb::sql
