#include "store/sqlite_store.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "common/valid_key.h"
#include "store/connections.h"
#include "store/file_checks.h"
#include "store/import_receipts_sql.h"
#include "store/outbox_sql.h"
#include "store/program_keys_sql.h"
#include "store/record_rows.h"
#include "store/record_scan.h"
#include "store/repair.h"
#include "store/served_days_sql.h"
#include "store/shape_scan.h"
#include "store/sql/statement.h"
#include "store/sql/transaction.h"
#include "store/store_options.h"

namespace tunedb {
namespace {

// Query reads this many matching records per read transaction.
constexpr size_t kQueryBatch = 256;

// Results go with their record through ON DELETE CASCADE.
constexpr const char kDeleteRecord[] = "DELETE FROM records WHERE id = ?1";
constexpr const char kDeleteAllRecords[] =
    "DELETE FROM records WHERE key_version = ?1";

constexpr const char kAddServed[] =
    "UPDATE records SET served_count = served_count + ?2,"
    " last_served_us = ?3 WHERE id = ?1";

constexpr const char kCountRecords[] =
    "SELECT COUNT(*) FROM records WHERE key_version = ?1";
// Read from the cuDNN version index alone.
constexpr const char kCudnnVersions[] =
    "SELECT DISTINCT cudnn_version FROM records ORDER BY cudnn_version";

// Every row `filter` matches, as a record or (where it cannot be read) a
// BadRow, in id order; in the caller's transaction.
absl::StatusOr<std::vector<ScannedRow>> ScanAll(sql::Database& db,
                                                const RecordFilter& filter,
                                                bool with_results) {
  std::vector<ScannedRow> rows;
  int64_t cursor = 0;
  bool exhausted = false;
  RETURN_IF_ERROR(ScanRecords(db, filter, std::numeric_limits<size_t>::max(),
                              with_results, &cursor, &rows, &exhausted));
  return rows;
}

// Deletes every current-version record; returns how many.
absl::StatusOr<int64_t> DeleteAll(sql::Database& db) {
  ASSIGN_OR_RETURN(sql::Statement erase,
                   db.GetCachedStatement(kDeleteAllRecords));
  erase.BindInt(1, kKeyFormatVersion);
  RETURN_IF_ERROR(erase.Run());
  return db.Changes();
}

// Deletes the records `filter` matches; returns how many. Rows that cannot
// be read cannot be matched and are left alone (see QuarantineBadRows).
absl::StatusOr<int64_t> DeleteMatching(sql::Database& db,
                                       const RecordFilter& filter) {
  // Collect first, delete after: the scan must not see its own deletes.
  ASSIGN_OR_RETURN(const std::vector<ScannedRow> matches,
                   ScanAll(db, filter, /*with_results=*/false));
  ASSIGN_OR_RETURN(sql::Statement erase, db.GetCachedStatement(kDeleteRecord));
  int64_t deleted = 0;
  for (const ScannedRow& row : matches) {
    const Record* record = std::get_if<Record>(&row);
    if (record == nullptr) continue;
    erase.Reset();
    erase.BindInt64(1, record->id);
    RETURN_IF_ERROR(erase.Run());
    deleted += db.Changes();
  }
  return deleted;
}

// Hands a batch of scanned rows to Query's `visit` and `bad_row`, counting
// down *remaining; *more is false once one of them said stop.
absl::Status VisitBatch(const std::string& path,
                        const std::vector<ScannedRow>& batch,
                        const std::function<bool(const Record&)>& visit,
                        const std::function<bool(const BadRow&)>& bad_row,
                        int64_t* remaining, bool* more) {
  for (const ScannedRow& row : batch) {
    if (const BadRow* bad = std::get_if<BadRow>(&row)) {
      if (!bad_row) return BadRowStatus(path, *bad);
      *more = bad_row(*bad);
    } else {
      *more = visit(std::get<Record>(row));
    }
    if (!*more) return absl::OkStatus();
    --*remaining;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const Options& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteStore> store,
                   SqliteStore::Open(options));
  return std::unique_ptr<Store>(std::move(store));
}

absl::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(
    const Options& options, Env* env) {
  RETURN_IF_ERROR(ValidateStoreOptions(options));
  if (options.read_only && !env->FileExists(options.path)) {
    return absl::NotFoundError(
        absl::StrCat("tunedb database ", options.path, " does not exist"));
  }
  std::unique_ptr<sql::Database> writer;
  if (!options.read_only) {
    ASSIGN_OR_RETURN(writer, OpenWriter(*env, options));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<sql::ConnectionPool> readers,
                   OpenReaders(*env, options));
  return std::unique_ptr<SqliteStore>(
      new SqliteStore(options, env, std::move(writer), std::move(readers)));
}

SqliteStore::SqliteStore(Options options, Env* env,
                         std::unique_ptr<sql::Database> writer,
                         std::unique_ptr<sql::ConnectionPool> readers)
    : options_(std::move(options)),
      in_memory_(options_.path == ":memory:"),
      env_(env),
      writer_(std::move(writer)),
      readers_(std::move(readers)) {}

SqliteStore::~SqliteStore() = default;

absl::Status SqliteStore::Read(const ReadFn& fn) {
  if (readers_ != nullptr) {
    sql::ConnectionPool::Lease db = readers_->Acquire();
    return fn(*db);
  }
  absl::MutexLock lock(&write_mu_);
  return fn(*writer_);
}

absl::Status SqliteStore::Exclusive(const WriteFn& fn) {
  if (writer_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(options_.path, " is open read-only"));
  }
  absl::MutexLock lock(&write_mu_);
  return fn(*writer_);
}

absl::Status SqliteStore::Write(const WriteFn& fn, bool truncate_wal) {
  if (writer_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(options_.path, " is open read-only"));
  }
  absl::MutexLock lock(&write_mu_);
  {
    sql::Transaction transaction(writer_.get(),
                                 sql::Transaction::Kind::kImmediate);
    RETURN_IF_ERROR(transaction.Begin());
    RETURN_IF_ERROR(fn(*writer_));
    RETURN_IF_ERROR(transaction.Commit());
  }
  if (!in_memory_) CheckpointAfterWrite(truncate_wal);
  return absl::OkStatus();
}

void SqliteStore::CheckpointAfterWrite(bool truncate_wal) {
  // The write is committed and durable already; what follows only keeps the
  // WAL small, and a checkpoint that cannot finish now (a reader still
  // needs the WAL, another process checkpoints) is retried after a later
  // write, so its status is not the caller's concern.
  if (truncate_wal || (options_.checkpoint_wal_bytes > 0 &&
                       env_->FileSize(options_.path + "-wal") >
                           options_.checkpoint_wal_bytes)) {
    TruncateWal().IgnoreError();
  } else if (options_.checkpoint_every_writes > 0 &&
             ++writes_since_checkpoint_ >= options_.checkpoint_every_writes) {
    writes_since_checkpoint_ = 0;
    // A PASSIVE checkpoint does what it can without waiting.
    writer_->Execute("PRAGMA wal_checkpoint(PASSIVE)").IgnoreError();
  }
}

absl::Status SqliteStore::WriteRecords(const WriteFn& fn, bool truncate_wal) {
  absl::Status written = Write(fn, truncate_wal);
  if (!IsIndexCorruption(written)) return written;
  // The failed transaction was rolled back. REINDEX fails as well where the
  // damage made two rows' key texts equal; the row is then left to
  // QuarantineBadRows, and the first error stands.
  if (!Write(RebuildRecordIndexes).ok()) return written;
  return Write(fn, truncate_wal);
}

absl::Status SqliteStore::TruncateWal() {
  writes_since_checkpoint_ = 0;
  ASSIGN_OR_RETURN(
      sql::Statement checkpoint,
      writer_->GetUniqueStatement("PRAGMA wal_checkpoint(TRUNCATE)"));
  ASSIGN_OR_RETURN(bool row, checkpoint.Step());
  if (row && checkpoint.ColumnInt(0) != 0) {
    return absl::UnavailableError(absl::StrCat(
        options_.path,
        ": WAL checkpoint incomplete: another connection is reading"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<ImportReceipt>> SqliteStore::FindImport(
    const std::string& id) {
  std::optional<ImportReceipt> receipt;
  RETURN_IF_ERROR(Read([&](sql::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(receipt, ReadImportReceipt(db, id));
    return absl::OkStatus();
  }));
  return receipt;
}

absl::StatusOr<std::vector<ProgramTotals>> SqliteStore::PutProgramKeys(
    const std::vector<ProgramKey>& rows, int64_t max_keys_per_program) {
  std::vector<ProgramTotals> totals;
  if (rows.empty()) return totals;
  RETURN_IF_ERROR(Write([&](sql::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(totals,
                     WriteProgramKeyRows(db, rows, max_keys_per_program));
    return absl::OkStatus();
  }));
  return totals;
}

absl::StatusOr<std::vector<ProgramKey>> SqliteStore::ReadProgramKeys(
    const std::string& program, const std::string& device, int64_t limit) {
  std::vector<ProgramKey> keys;
  RETURN_IF_ERROR(Read([&](sql::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(keys, ReadProgramKeyRows(db, program, device, limit));
    return absl::OkStatus();
  }));
  return keys;
}

absl::StatusOr<std::vector<ProgramTotals>> SqliteStore::ProgramKeyTotals() {
  std::vector<ProgramTotals> totals;
  RETURN_IF_ERROR(Read([&](sql::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(totals, ReadProgramTotals(db));
    return absl::OkStatus();
  }));
  return totals;
}

absl::Status SqliteStore::ForgetPrograms(
    const std::vector<std::string>& programs) {
  if (programs.empty()) return absl::OkStatus();
  return Write([&](sql::Database& db) {
    return DeleteProgramKeyRows(db, programs);
  });
}

absl::StatusOr<std::optional<Record>> SqliteStore::Get(const ProblemKey& key) {
  std::optional<Record> found;
  RETURN_IF_ERROR(Read([&](sql::Database& db) -> absl::Status {
    sql::Transaction snapshot(&db, sql::Transaction::Kind::kDeferred);
    RETURN_IF_ERROR(snapshot.Begin());
    ASSIGN_OR_RETURN(found, GetRecord(db, key));
    return snapshot.Commit();
  }));
  return found;
}

absl::StatusOr<int64_t> SqliteStore::Put(const Record& record) {
  int64_t id = 0;
  RETURN_IF_ERROR(WriteRecords([&](sql::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(id, PutRecord(db, record));
    return absl::OkStatus();
  }));
  return id;
}

absl::StatusOr<int64_t> SqliteStore::PutForFleet(const Record& record) {
  int64_t id = 0;
  RETURN_IF_ERROR(WriteRecords([&](sql::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(id, PutRecord(db, record));
    Record stored = record;
    stored.id = id;
    return AppendToOutbox(db, stored);
  }));
  return id;
}

absl::StatusOr<std::vector<OutboxEntry>> SqliteStore::ReadOutbox(
    int limit, int64_t* dropped) {
  std::vector<OutboxEntry> entries;
  std::vector<int64_t> unreadable;
  RETURN_IF_ERROR(Read([&](sql::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(entries, ReadOutboxRows(db, limit, &unreadable));
    return absl::OkStatus();
  }));
  if (!unreadable.empty()) RETURN_IF_ERROR(RemoveFromOutbox(unreadable));
  if (dropped != nullptr) *dropped = static_cast<int64_t>(unreadable.size());
  return entries;
}

absl::Status SqliteStore::RemoveFromOutbox(const std::vector<int64_t>& ids) {
  if (ids.empty()) return absl::OkStatus();
  return Write([&](sql::Database& db) { return DeleteOutboxRows(db, ids); });
}

absl::StatusOr<int64_t> SqliteStore::OutboxSize() {
  int64_t count = 0;
  RETURN_IF_ERROR(Read([&](sql::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(count, CountOutboxRows(db));
    return absl::OkStatus();
  }));
  return count;
}

absl::Status SqliteStore::PutAll(const std::vector<Record>& records) {
  ASSIGN_OR_RETURN(std::unique_ptr<StagedImport> import, BeginImport());
  for (const Record& record : records) RETURN_IF_ERROR(import->Add(record));
  return import->Commit().status();
}

absl::Status SqliteStore::Query(
    const RecordFilter& filter, int64_t after_id, int limit,
    const std::function<bool(const Record&)>& visit,
    const std::function<bool(const BadRow&)>& bad_row) {
  RETURN_IF_ERROR(filter.Validate());
  int64_t cursor = after_id;
  int64_t remaining = limit > 0 ? limit : std::numeric_limits<int64_t>::max();
  while (remaining > 0) {
    const size_t want = static_cast<size_t>(
        std::min<int64_t>(remaining, static_cast<int64_t>(kQueryBatch)));
    std::vector<ScannedRow> batch;
    bool exhausted = false;
    RETURN_IF_ERROR(Read([&](sql::Database& db) -> absl::Status {
      sql::Transaction snapshot(&db, sql::Transaction::Kind::kDeferred);
      RETURN_IF_ERROR(snapshot.Begin());
      RETURN_IF_ERROR(ScanRecords(db, filter, want, /*with_results=*/true,
                                  &cursor, &batch, &exhausted));
      return snapshot.Commit();
    }));
    // No connection is held while the caller looks at the records.
    bool more = true;
    RETURN_IF_ERROR(
        VisitBatch(options_.path, batch, visit, bad_row, &remaining, &more));
    if (!more || exhausted) break;
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> SqliteStore::Delete(const RecordFilter& filter) {
  RETURN_IF_ERROR(filter.Validate());
  int64_t deleted = 0;
  RETURN_IF_ERROR(Write([&](sql::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(
        deleted, filter.empty() ? DeleteAll(db) : DeleteMatching(db, filter));
    return absl::OkStatus();
  }));
  return deleted;
}

absl::StatusOr<std::vector<Record>> SqliteStore::FamilyNear(
    const ProblemKey& key, double radius, int limit, bool* more) {
  std::vector<Record> near;
  bool left_out = false;
  RETURN_IF_ERROR(Read([&](sql::Database& db) -> absl::Status {
    sql::Transaction snapshot(&db, sql::Transaction::Kind::kDeferred);
    RETURN_IF_ERROR(snapshot.Begin());
    ASSIGN_OR_RETURN(near,
                     ScanFamilyNear(db, key, radius, limit, &left_out));
    return snapshot.Commit();
  }));
  if (more != nullptr) *more = left_out;
  return near;
}

absl::StatusOr<std::vector<BadRow>> SqliteStore::QuarantineBadRows() {
  std::vector<BadRow> moved;
  RETURN_IF_ERROR(Write([&](sql::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(std::vector<ScannedRow> rows,
                     ScanAll(db, RecordFilter(), /*with_results=*/true));
    for (ScannedRow& row : rows) {
      if (BadRow* bad = std::get_if<BadRow>(&row)) moved.push_back(*bad);
    }
    return QuarantineRows(db, moved);
  }));
  return moved;
}

absl::Status SqliteStore::AddServed(const std::vector<ServedCount>& counts) {
  if (counts.empty()) return absl::OkStatus();
  const int64_t now_us = absl::ToUnixMicros(absl::Now());
  return Write([&](sql::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(sql::Statement update, db.GetCachedStatement(kAddServed));
    for (const ServedCount& c : counts) {
      update.Reset();
      update.BindInt64(1, c.id);
      update.BindInt64(2, c.count);
      update.BindInt64(3, now_us);
      RETURN_IF_ERROR(update.Run());
    }
    return AddServedDayRows(db, counts, UtcDayOfMicros(now_us));
  });
}

absl::StatusOr<std::vector<ServedDayProgram>> SqliteStore::ServedDays(
    int64_t since_day) {
  std::vector<ServedDayProgram> rows;
  RETURN_IF_ERROR(Read([&](sql::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(rows, ReadServedDayRows(db, since_day));
    return absl::OkStatus();
  }));
  return rows;
}

absl::StatusOr<int64_t> SqliteStore::Count() {
  int64_t count = 0;
  RETURN_IF_ERROR(Read([&](sql::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(sql::Statement statement,
                     db.GetCachedStatement(kCountRecords));
    statement.BindInt(1, kKeyFormatVersion);
    ASSIGN_OR_RETURN(bool row, statement.Step());
    if (row) count = statement.ColumnInt64(0);
    return absl::OkStatus();
  }));
  return count;
}

absl::StatusOr<std::vector<int>> SqliteStore::CudnnVersions() {
  std::vector<int> versions;
  RETURN_IF_ERROR(Read([&](sql::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(sql::Statement statement,
                     db.GetCachedStatement(kCudnnVersions));
    while (true) {
      ASSIGN_OR_RETURN(bool row, statement.Step());
      if (!row) return absl::OkStatus();
      versions.push_back(static_cast<int>(statement.ColumnInt64(0)));
    }
  }));
  return versions;
}

int64_t SqliteStore::SizeBytes() const {
  if (in_memory_) return 0;
  return env_->FileSize(options_.path) + env_->FileSize(options_.path + "-wal");
}

absl::Status SqliteStore::QuickCheck() {
  return Read([](sql::Database& db) { return QuickCheckStoreFile(db); });
}

absl::Status SqliteStore::Checkpoint() {
  if (writer_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(options_.path, " is open read-only"));
  }
  if (in_memory_) return absl::OkStatus();
  absl::MutexLock lock(&write_mu_);
  return TruncateWal();
}

}  // namespace tunedb
