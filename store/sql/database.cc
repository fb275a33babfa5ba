#include "store/sql/database.h"

#include <sqlite3.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "store/sql/error.h"

namespace tunedb::sql {

absl::StatusOr<std::unique_ptr<Database>> Database::Open(
    const std::string& path, Mode mode, int busy_timeout_ms) {
  int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI;
  switch (mode) {
    case Mode::kReadWriteCreate:
      flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
      break;
    case Mode::kReadWrite:
      flags |= SQLITE_OPEN_READWRITE;
      break;
    case Mode::kReadOnly:
      flags |= SQLITE_OPEN_READONLY;
      break;
  }
  sqlite3* handle = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &handle, flags, nullptr);
  // Even on failure sqlite3_open_v2 usually returns a handle that holds the
  // message; Database takes it over so it is closed in every case.
  std::unique_ptr<Database> db(new Database(path, handle));
  if (rc != SQLITE_OK) return db->Error(rc, "open");
  sqlite3_extended_result_codes(handle, 1);
  rc = sqlite3_busy_timeout(handle, busy_timeout_ms);
  if (rc != SQLITE_OK) return db->Error(rc, "busy_timeout");
  return db;
}

Database::Database(std::string path, sqlite3* db)
    : path_(std::move(path)), db_(db) {}

Database::~Database() {
  for (auto& [sql, cached] : cache_) sqlite3_finalize(cached.stmt);
  sqlite3_close_v2(db_);
}

absl::Status Database::Error(int rc, absl::string_view context) const {
  return SqliteStatus(rc, db_, absl::StrCat(path_, ": ", context));
}

absl::Status Database::Execute(absl::string_view sql) {
  std::string text(sql);
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return Error(rc, text);
  return absl::OkStatus();
}

absl::StatusOr<sqlite3_stmt*> Database::Prepare(absl::string_view sql,
                                                bool persistent) {
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              persistent ? SQLITE_PREPARE_PERSISTENT : 0, &stmt,
                              &tail);
  if (rc != SQLITE_OK) return Error(rc, sql);
  if (stmt == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ": empty SQL statement: ", sql));
  }
  if (tail != nullptr && tail != sql.data() + sql.size() &&
      absl::string_view(tail).find_first_not_of(" \t\r\n;") !=
          absl::string_view::npos) {
    sqlite3_finalize(stmt);
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ": more than one SQL statement: ", sql));
  }
  return stmt;
}

absl::StatusOr<Statement> Database::GetCachedStatement(absl::string_view sql) {
  auto it = cache_.find(std::string(sql));
  if (it == cache_.end()) {
    absl::StatusOr<sqlite3_stmt*> stmt = Prepare(sql, /*persistent=*/true);
    if (!stmt.ok()) return stmt.status();
    it = cache_.emplace(std::string(sql), CachedStatement{*stmt, false}).first;
  }
  CachedStatement& cached = it->second;
  if (cached.in_use) {
    return absl::FailedPreconditionError(
        absl::StrCat(path_, ": cached statement already in use: ", sql));
  }
  cached.in_use = true;
  return Statement(this, cached.stmt, /*owned=*/false, &cached.in_use);
}

absl::StatusOr<Statement> Database::GetUniqueStatement(absl::string_view sql) {
  absl::StatusOr<sqlite3_stmt*> stmt = Prepare(sql, /*persistent=*/false);
  if (!stmt.ok()) return stmt.status();
  return Statement(this, *stmt, /*owned=*/true, nullptr);
}

absl::StatusOr<int64_t> Database::QueryInt64(absl::string_view sql) {
  absl::StatusOr<Statement> statement = GetUniqueStatement(sql);
  if (!statement.ok()) return statement.status();
  absl::StatusOr<bool> row = statement->Step();
  if (!row.ok()) return row.status();
  if (!*row) {
    return absl::NotFoundError(absl::StrCat(path_, ": no row from ", sql));
  }
  return statement->ColumnInt64(0);
}

bool Database::InTransaction() const {
  return sqlite3_get_autocommit(db_) == 0;
}

int64_t Database::Changes() const { return sqlite3_changes64(db_); }

}  // namespace tunedb::sql
