#include "store/connections.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "store/file_checks.h"
#include "store/sql/statement.h"
#include "store/sql/store_schema.h"

namespace tunedb {
namespace {

// Keeps the code, says which operation failed.
absl::Status OpenError(const absl::Status& status) {
  return absl::Status(
      status.code(),
      absl::StrCat("cannot open the tunedb database: ", status.message()));
}

// Sets the WAL journal once: the mode it reports.
absl::StatusOr<std::string> SetWal(sql::Database& db) {
  ASSIGN_OR_RETURN(sql::Statement wal,
                   db.GetUniqueStatement("PRAGMA journal_mode = WAL"));
  ASSIGN_OR_RETURN(bool row, wal.Step());
  return row ? wal.ColumnText(0) : std::string();
}

// Switches `db` to the WAL journal; FAILED_PRECONDITION if it stays in
// another mode. SQLite answers the switch with SQLITE_BUSY at once, without
// its busy handler, while another connection opening the same new file
// holds it: tried again until options.busy_timeout_ms has passed.
absl::Status UseWal(sql::Database& db, const Store::Options& options) {
  const absl::Time give_up =
      absl::Now() + absl::Milliseconds(options.busy_timeout_ms);
  absl::StatusOr<std::string> set = SetWal(db);
  while (absl::IsUnavailable(set.status()) && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(5));
    set = SetWal(db);
  }
  if (!set.ok()) return set.status();
  const std::string mode = *set;
  if (absl::AsciiStrToLower(mode) != "wal") {
    return absl::FailedPreconditionError(absl::StrCat(
        options.path, ": cannot switch to WAL journal (journal_mode is \"",
        mode, "\")"));
  }
  return absl::OkStatus();
}

// Opens, checks and (if needed) creates or migrates the write connection.
absl::StatusOr<std::unique_ptr<sql::Database>> OpenWriteConnection(
    const Store::Options& options) {
  ASSIGN_OR_RETURN(
      std::unique_ptr<sql::Database> db,
      sql::Database::Open(options.path, sql::Database::Mode::kReadWriteCreate,
                          options.busy_timeout_ms));
  // Identity first: nothing may be written to another application's file.
  ASSIGN_OR_RETURN(int version, CheckStoreSchema(*db));
  if (version > 0) RETURN_IF_ERROR(CheckStoreFile(*db));
  RETURN_IF_ERROR(db->Execute("PRAGMA foreign_keys = ON"));
  if (options.path != ":memory:") RETURN_IF_ERROR(UseWal(*db, options));
  RETURN_IF_ERROR(db->Execute(absl::StrCat(
      "PRAGMA synchronous = ", absl::AsciiStrToUpper(options.synchronous))));
  if (options.checkpoint_wal_bytes > 0) {
    RETURN_IF_ERROR(db->Execute(absl::StrCat("PRAGMA journal_size_limit = ",
                                             options.checkpoint_wal_bytes)));
  }
  // An up-to-date file needs no write lock to open, so opening does not
  // wait for another process's long write.
  if (version < kStoreSchemaVersion) {
    RETURN_IF_ERROR(CreateOrMigrateStoreSchema(*db));
  }
  return db;
}

// The checks of a read-only store's first connection: the file is a
// current tunedb database that passes the bounded check.
absl::Status CheckReadOnlyFile(sql::Database& db,
                               const Store::Options& options) {
  ASSIGN_OR_RETURN(int version, CheckStoreSchema(db));
  if (version == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(options.path, " is empty, not a tunedb database"));
  }
  if (version < kStoreSchemaVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat(options.path, " has tunedb schema version ", version,
                     ", older than this build's (", kStoreSchemaVersion,
                     "); open it once read-write to migrate it"));
  }
  return CheckStoreFile(db);
}

// Opens a read-only connection; with `check`, also checks the file
// (CheckReadOnlyFile).
absl::StatusOr<std::unique_ptr<sql::Database>> OpenReader(
    Env& env, const Store::Options& options, bool check) {
  ASSIGN_OR_RETURN(const std::string name, ReaderName(env, options.path));
  ASSIGN_OR_RETURN(std::unique_ptr<sql::Database> db,
                   sql::Database::Open(name, sql::Database::Mode::kReadOnly,
                                       options.busy_timeout_ms));
  if (check) RETURN_IF_ERROR(CheckReadOnlyFile(*db, options));
  return db;
}

}  // namespace

absl::StatusOr<std::unique_ptr<sql::Database>> OpenWriter(
    Env& env, const Store::Options& options) {
  RETURN_IF_ERROR(CheckWritable(env, options.path));
  // A new file gets options.file_mode, not the umask's; SQLite then gives
  // its WAL and shared-memory files the same. An existing file keeps its
  // own, and any other failure SQLite's open reports with its cause.
  if (IsFilePath(options.path)) {
    env.CreateFileWithMode(options.path, options.file_mode);
  }
  absl::StatusOr<std::unique_ptr<sql::Database>> opened =
      OpenWriteConnection(options);
  if (!opened.ok()) return OpenError(opened.status());
  return opened;
}

absl::StatusOr<std::unique_ptr<sql::ConnectionPool>> OpenReaders(
    Env& env, const Store::Options& options) {
  int count = options.path == ":memory:" ? 0 : options.read_connections;
  if (options.read_only) count = std::max(count, 1);
  if (count == 0) return std::unique_ptr<sql::ConnectionPool>();
  std::vector<std::unique_ptr<sql::Database>> connections;
  for (int i = 0; i < count; ++i) {
    // The writer already checked the file; a read-only store checks it on
    // its first connection.
    absl::StatusOr<std::unique_ptr<sql::Database>> db =
        OpenReader(env, options, options.read_only && i == 0);
    if (!db.ok()) return OpenError(db.status());
    connections.push_back(*std::move(db));
  }
  return std::make_unique<sql::ConnectionPool>(std::move(connections));
}

}  // namespace tunedb
