#include "store/sql/statement.h"

#include <sqlite3.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "store/sql/database.h"
#include "store/sql/error.h"

namespace tunedb::sql {

Statement::Statement(Database* db, sqlite3_stmt* stmt, bool owned, bool* in_use)
    : db_(db), stmt_(stmt), owned_(owned), in_use_(in_use) {}

Statement::Statement(Statement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      stmt_(std::exchange(other.stmt_, nullptr)),
      owned_(std::exchange(other.owned_, false)),
      in_use_(std::exchange(other.in_use_, nullptr)),
      bind_status_(std::move(other.bind_status_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    Release();
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
    owned_ = std::exchange(other.owned_, false);
    in_use_ = std::exchange(other.in_use_, nullptr);
    bind_status_ = std::move(other.bind_status_);
  }
  return *this;
}

Statement::~Statement() { Release(); }

void Statement::Release() {
  if (stmt_ == nullptr) return;
  if (owned_) {
    sqlite3_finalize(stmt_);
  } else {
    // Errors of the last step were already reported by Step().
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  if (in_use_ != nullptr) *in_use_ = false;
  stmt_ = nullptr;
  in_use_ = nullptr;
}

void Statement::NoteBind(int rc, int index) {
  if (rc != SQLITE_OK && bind_status_.ok()) {
    bind_status_ = SqliteStatus(
        rc, db_->handle(),
        absl::StrCat("binding parameter ", index, " of ", sqlite3_sql(stmt_)));
  }
}

void Statement::BindInt64(int index, int64_t value) {
  NoteBind(sqlite3_bind_int64(stmt_, index, value), index);
}

void Statement::BindDouble(int index, double value) {
  NoteBind(sqlite3_bind_double(stmt_, index, value), index);
}

void Statement::BindText(int index, absl::string_view value) {
  NoteBind(sqlite3_bind_text64(stmt_, index, value.data(), value.size(),
                               SQLITE_TRANSIENT, SQLITE_UTF8),
           index);
}

void Statement::BindBlob(int index, absl::string_view bytes) {
  // An empty value is a zero-length BLOB, never NULL (which a null pointer
  // would bind).
  const char* data = bytes.empty() ? "" : bytes.data();
  NoteBind(sqlite3_bind_blob64(stmt_, index, data, bytes.size(),
                               SQLITE_TRANSIENT),
           index);
}

void Statement::BindNull(int index) {
  NoteBind(sqlite3_bind_null(stmt_, index), index);
}

absl::StatusOr<bool> Statement::Step() {
  if (!bind_status_.ok()) return bind_status_;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_->Error(rc, sqlite3_sql(stmt_));
}

absl::Status Statement::Run() {
  while (true) {
    absl::StatusOr<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
  }
}

void Statement::Reset() { sqlite3_reset(stmt_); }

int64_t Statement::ColumnInt64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

int Statement::ColumnInt(int column) const {
  return sqlite3_column_int(stmt_, column);
}

double Statement::ColumnDouble(int column) const {
  return sqlite3_column_double(stmt_, column);
}

std::string Statement::ColumnText(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return std::string();
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::string Statement::ColumnBlob(int column) const {
  const void* bytes = sqlite3_column_blob(stmt_, column);
  if (bytes == nullptr) return std::string();
  return std::string(static_cast<const char*>(bytes),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

bool Statement::ColumnIsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

Statement::ColumnType Statement::GetColumnType(int column) const {
  switch (sqlite3_column_type(stmt_, column)) {
    case SQLITE_INTEGER:
      return ColumnType::kInteger;
    case SQLITE_FLOAT:
      return ColumnType::kFloat;
    case SQLITE_TEXT:
      return ColumnType::kText;
    case SQLITE_BLOB:
      return ColumnType::kBlob;
    default:
      return ColumnType::kNull;
  }
}

}  // namespace tunedb::sql
