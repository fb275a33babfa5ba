#include "store/sqlite_store.h"

#include <sys/stat.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "common/valid_key.h"
#include "store/sql/statement.h"
#include "store/sql/store_schema.h"
#include "store/sql/transaction.h"

namespace tunedb {
namespace {

// Query reads this many matching records per read transaction.
constexpr size_t kQueryBatch = 256;

// Columns of a record row, in the order ReadRecordRow expects.
#define TUNEDB_RECORD_COLUMNS                                              \
  "id, key_text, measured_at_us, host, gpu_uuid, driver_version, finder, " \
  "repeats, workspace_cap_bytes, search_ms, verified, served_count, "      \
  "timing_version"

constexpr const char kGetRecord[] =
    "SELECT " TUNEDB_RECORD_COLUMNS
    " FROM records INDEXED BY records_by_key_hash"
    " WHERE key_hash = ?1 AND key_text = ?2 AND key_version = ?3";

// ?3 and ?4 (gpu model, op) are pushed down from the filter when it has
// them; RecordFilter::Matches checks every field afterwards anyway.
constexpr const char kScanRecords[] =
    "SELECT " TUNEDB_RECORD_COLUMNS
    " FROM records WHERE key_version = ?1 AND id > ?2"
    " AND (?3 IS NULL OR gpu_model = ?3) AND (?4 IS NULL OR op = ?4)"
    " ORDER BY id";

constexpr const char kScanRecordsInTimeRange[] =
    "SELECT " TUNEDB_RECORD_COLUMNS
    " FROM records WHERE key_version = ?1 AND id > ?2"
    " AND (?3 IS NULL OR gpu_model = ?3) AND (?4 IS NULL OR op = ?4)"
    " AND measured_at_us >= ?5 AND measured_at_us < ?6"
    " ORDER BY id";

// A filter with a key hash is answered through the key-hash index.
constexpr const char kScanRecordsByHash[] =
    "SELECT " TUNEDB_RECORD_COLUMNS
    " FROM records INDEXED BY records_by_key_hash"
    " WHERE key_hash = ?3 AND key_version = ?1 AND id > ?2"
    " ORDER BY id";

#undef TUNEDB_RECORD_COLUMNS

constexpr const char kGetResults[] =
    "SELECT algo, math_type, status, workspace_bytes, deterministic, retimed,"
    " error, launch_median_ms, launch_spread_ms, launch_samples,"
    " gpu_median_ms, gpu_spread_ms, gpu_samples,"
    " host_median_ms, host_spread_ms, host_samples"
    " FROM results WHERE record_id = ?1 ORDER BY rank";

// served_count and last_served_us are left alone on replace.
constexpr const char kUpsertRecord[] =
    "INSERT INTO records(key_version, key_hash, key_text, gpu_model,"
    " cudnn_version, op, measured_at_us, host, gpu_uuid, driver_version,"
    " finder, repeats, workspace_cap_bytes, search_ms, verified, served_count,"
    " timing_version)"
    " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,"
    " ?16, ?17)"
    " ON CONFLICT(key_text) DO UPDATE SET"
    " key_version = excluded.key_version, key_hash = excluded.key_hash,"
    " gpu_model = excluded.gpu_model, cudnn_version = excluded.cudnn_version,"
    " op = excluded.op, measured_at_us = excluded.measured_at_us,"
    " host = excluded.host, gpu_uuid = excluded.gpu_uuid,"
    " driver_version = excluded.driver_version, finder = excluded.finder,"
    " repeats = excluded.repeats,"
    " workspace_cap_bytes = excluded.workspace_cap_bytes,"
    " search_ms = excluded.search_ms, verified = excluded.verified,"
    " timing_version = excluded.timing_version"
    " RETURNING id";

constexpr const char kDeleteResults[] =
    "DELETE FROM results WHERE record_id = ?1";

constexpr const char kInsertResult[] =
    "INSERT INTO results(record_id, rank, algo, math_type, status,"
    " workspace_bytes, deterministic, retimed, error,"
    " launch_median_ms, launch_spread_ms, launch_samples,"
    " gpu_median_ms, gpu_spread_ms, gpu_samples,"
    " host_median_ms, host_spread_ms, host_samples)"
    " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,"
    " ?16, ?17, ?18)";

// Results go with their record through ON DELETE CASCADE.
constexpr const char kDeleteRecord[] = "DELETE FROM records WHERE id = ?1";
constexpr const char kDeleteAllRecords[] =
    "DELETE FROM records WHERE key_version = ?1";

constexpr const char kAddServed[] =
    "UPDATE records SET served_count = served_count + ?2,"
    " last_served_us = ?3 WHERE id = ?1";

constexpr const char kCountRecords[] =
    "SELECT COUNT(*) FROM records WHERE key_version = ?1";

int64_t FileSize(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return 0;
  return static_cast<int64_t>(st.st_size);
}

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// A record row (TUNEDB_RECORD_COLUMNS) without its results.
absl::StatusOr<Record> ReadRecordRow(const sql::Statement& row,
                                     const std::string& path) {
  Record record;
  record.id = row.ColumnInt64(0);
  absl::StatusOr<ProblemKey> key = ProblemKey::Parse(row.ColumnText(1));
  if (!key.ok()) {
    return absl::DataLossError(
        absl::StrCat(path, ": record ", record.id,
                     " has a bad key: ", key.status().message()));
  }
  record.key = *std::move(key);
  record.measured_at_us = row.ColumnInt64(2);
  record.host = row.ColumnText(3);
  record.gpu_uuid = row.ColumnText(4);
  record.driver_version = row.ColumnText(5);
  record.finder = row.ColumnText(6);
  record.repeats = row.ColumnInt(7);
  record.workspace_cap_bytes = row.ColumnInt64(8);
  record.search_ms = row.ColumnDouble(9);
  record.verified = row.ColumnBool(10);
  record.served_count = row.ColumnInt64(11);
  record.timing_version = row.ColumnInt(12);
  return record;
}

absl::Status LoadResults(sql::Database& db, Record& record) {
  ASSIGN_OR_RETURN(sql::Statement statement,
                   db.GetCachedStatement(kGetResults));
  statement.BindInt64(1, record.id);
  record.results.clear();
  while (true) {
    ASSIGN_OR_RETURN(bool row, statement.Step());
    if (!row) return absl::OkStatus();
    AlgoResult result;
    result.algo = statement.ColumnInt(0);
    absl::StatusOr<MathType> math_type = ParseMathType(statement.ColumnText(1));
    absl::StatusOr<AlgoStatus> status =
        ParseAlgoStatus(statement.ColumnText(2));
    if (!math_type.ok() || !status.ok()) {
      return absl::DataLossError(
          absl::StrCat(db.path(), ": record ", record.id,
                       " has a result with a bad math_type or status: ",
                       statement.ColumnText(1), ", ", statement.ColumnText(2)));
    }
    result.math_type = *math_type;
    result.status = *status;
    result.workspace_bytes = statement.ColumnInt64(3);
    result.deterministic = statement.ColumnBool(4);
    result.retimed = statement.ColumnBool(5);
    result.error = statement.ColumnText(6);
    int column = 7;
    for (Timing* timing : {&result.launch, &result.gpu, &result.host}) {
      timing->median_ms = statement.ColumnDouble(column++);
      timing->spread_ms = statement.ColumnDouble(column++);
      timing->samples = statement.ColumnInt(column++);
    }
    record.results.push_back(std::move(result));
  }
}

absl::StatusOr<int64_t> PutRecord(sql::Database& db, const Record& record) {
  RETURN_IF_ERROR(record.key.Validate());
  const std::string key_text = record.key.ToText();
  int64_t id = 0;
  {
    ASSIGN_OR_RETURN(sql::Statement upsert,
                     db.GetCachedStatement(kUpsertRecord));
    upsert.BindInt(1, kKeyFormatVersion);
    upsert.BindInt64(2, static_cast<int64_t>(record.key.Hash()));
    upsert.BindText(3, key_text);
    upsert.BindText(4, record.key.device.gpu_model);
    upsert.BindInt(5, record.key.device.cudnn_version);
    upsert.BindText(6, ConvOpName(record.key.problem.op));
    upsert.BindInt64(7, record.measured_at_us);
    upsert.BindText(8, record.host);
    upsert.BindText(9, record.gpu_uuid);
    upsert.BindText(10, record.driver_version);
    upsert.BindText(11, record.finder);
    upsert.BindInt(12, record.repeats);
    upsert.BindInt64(13, record.workspace_cap_bytes);
    upsert.BindDouble(14, record.search_ms);
    upsert.BindBool(15, record.verified);
    upsert.BindInt64(16, record.served_count);
    upsert.BindInt(17, record.timing_version);
    ASSIGN_OR_RETURN(bool row, upsert.Step());
    if (!row) {
      return absl::InternalError(
          absl::StrCat(db.path(), ": upsert returned no id for ", key_text));
    }
    id = upsert.ColumnInt64(0);
    RETURN_IF_ERROR(upsert.Run());
  }
  {
    ASSIGN_OR_RETURN(sql::Statement erase,
                     db.GetCachedStatement(kDeleteResults));
    erase.BindInt64(1, id);
    RETURN_IF_ERROR(erase.Run());
  }
  ASSIGN_OR_RETURN(sql::Statement insert, db.GetCachedStatement(kInsertResult));
  for (size_t rank = 0; rank < record.results.size(); ++rank) {
    const AlgoResult& result = record.results[rank];
    insert.Reset();
    insert.BindInt64(1, id);
    insert.BindInt64(2, static_cast<int64_t>(rank));
    insert.BindInt(3, result.algo);
    insert.BindText(4, MathTypeName(result.math_type));
    insert.BindText(5, AlgoStatusName(result.status));
    insert.BindInt64(6, result.workspace_bytes);
    insert.BindBool(7, result.deterministic);
    insert.BindBool(8, result.retimed);
    insert.BindText(9, result.error);
    int param = 10;
    for (const Timing* timing : {&result.launch, &result.gpu, &result.host}) {
      insert.BindDouble(param++, timing->median_ms);
      insert.BindDouble(param++, timing->spread_ms);
      insert.BindInt(param++, timing->samples);
    }
    RETURN_IF_ERROR(insert.Run());
  }
  return id;
}

// Reads matching records with id > *cursor, in id order, until `want` are
// found or the table ends (*exhausted). Advances *cursor past every row read.
// Results are loaded only `with_results`. Runs in the caller's transaction.
absl::Status ScanRecords(sql::Database& db, const RecordFilter& filter,
                         size_t want, bool with_results, int64_t* cursor,
                         std::vector<Record>* out, bool* exhausted) {
  const std::optional<uint64_t> hash = filter.KeyHash();
  const bool timed = !hash && (filter.since_us != 0 || filter.until_us != 0);
  ASSIGN_OR_RETURN(sql::Statement scan,
                   db.GetCachedStatement(hash    ? kScanRecordsByHash
                                         : timed ? kScanRecordsInTimeRange
                                                 : kScanRecords));
  scan.BindInt(1, kKeyFormatVersion);
  scan.BindInt64(2, *cursor);
  if (hash) {
    // The rest of the filter (other fields, time range) is checked by
    // Matches() below.
    scan.BindInt64(3, static_cast<int64_t>(*hash));
  } else {
    auto gpu = filter.fields.find("gpu");
    if (gpu != filter.fields.end()) {
      scan.BindText(3, gpu->second);
    } else {
      scan.BindNull(3);
    }
    auto op = filter.fields.find("op");
    if (op != filter.fields.end()) {
      scan.BindText(4, op->second);
    } else {
      scan.BindNull(4);
    }
    if (timed) {
      scan.BindInt64(5, filter.since_us != 0
                            ? filter.since_us
                            : std::numeric_limits<int64_t>::min());
      scan.BindInt64(6, filter.until_us != 0
                            ? filter.until_us
                            : std::numeric_limits<int64_t>::max());
    }
  }
  *exhausted = false;
  size_t found = 0;
  while (found < want) {
    ASSIGN_OR_RETURN(bool row, scan.Step());
    if (!row) {
      *exhausted = true;
      break;
    }
    ASSIGN_OR_RETURN(Record record, ReadRecordRow(scan, db.path()));
    *cursor = record.id;
    if (!filter.Matches(record)) continue;
    if (with_results) RETURN_IF_ERROR(LoadResults(db, record));
    out->push_back(std::move(record));
    ++found;
  }
  return absl::OkStatus();
}

absl::Status RunQuickCheck(sql::Database& db) {
  ASSIGN_OR_RETURN(sql::Statement check,
                   db.GetUniqueStatement("PRAGMA quick_check"));
  std::vector<std::string> problems;
  while (true) {
    ASSIGN_OR_RETURN(bool row, check.Step());
    if (!row) break;
    std::string line = check.ColumnText(0);
    if (line != "ok") problems.push_back(std::move(line));
  }
  if (problems.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      db.path(),
      " is corrupt (PRAGMA quick_check: ", absl::StrJoin(problems, "; "), ")"));
}

absl::Status ValidateOptions(const Store::Options& options) {
  if (options.path.empty()) {
    return absl::InvalidArgumentError("store path is empty");
  }
  const std::string sync = absl::AsciiStrToUpper(options.synchronous);
  if (sync != "FULL" && sync != "NORMAL" && sync != "EXTRA") {
    return absl::InvalidArgumentError(
        absl::StrCat("store synchronous must be FULL, NORMAL or EXTRA, not \"",
                     options.synchronous, "\""));
  }
  if (options.busy_timeout_ms < 0) {
    return absl::InvalidArgumentError("store busy_timeout_ms is negative");
  }
  if (options.read_connections < 0) {
    return absl::InvalidArgumentError("store read_connections is negative");
  }
  if (options.read_only && options.path == ":memory:") {
    return absl::InvalidArgumentError(
        "a read-only store cannot be in memory (it would always be empty)");
  }
  return absl::OkStatus();
}

// Opens, checks and (if needed) creates or migrates the write connection.
absl::StatusOr<std::unique_ptr<sql::Database>> OpenWriter(
    const Store::Options& options, bool in_memory) {
  ASSIGN_OR_RETURN(
      std::unique_ptr<sql::Database> db,
      sql::Database::Open(options.path, sql::Database::Mode::kReadWriteCreate,
                          options.busy_timeout_ms));
  // Identity first: nothing may be written to another application's file.
  ASSIGN_OR_RETURN(int version, CheckStoreSchema(*db));
  RETURN_IF_ERROR(RunQuickCheck(*db));
  RETURN_IF_ERROR(db->Execute("PRAGMA foreign_keys = ON"));
  if (!in_memory) {
    ASSIGN_OR_RETURN(sql::Statement wal,
                     db->GetUniqueStatement("PRAGMA journal_mode = WAL"));
    ASSIGN_OR_RETURN(bool row, wal.Step());
    const std::string mode = row ? wal.ColumnText(0) : std::string();
    if (absl::AsciiStrToLower(mode) != "wal") {
      return absl::FailedPreconditionError(absl::StrCat(
          options.path, ": cannot switch to WAL journal (journal_mode is \"",
          mode, "\")"));
    }
  }
  RETURN_IF_ERROR(db->Execute(absl::StrCat(
      "PRAGMA synchronous = ", absl::AsciiStrToUpper(options.synchronous))));
  // An up-to-date file needs no write lock to open, so opening does not
  // wait for another process's long write.
  if (version < kStoreSchemaVersion) {
    RETURN_IF_ERROR(CreateOrMigrateStoreSchema(*db));
  }
  return db;
}

// Opens a read-only connection; with `check`, also verifies the file is a
// current tunedb database that passes quick_check.
absl::StatusOr<std::unique_ptr<sql::Database>> OpenReader(
    const Store::Options& options, bool check) {
  ASSIGN_OR_RETURN(
      std::unique_ptr<sql::Database> db,
      sql::Database::Open(options.path, sql::Database::Mode::kReadOnly,
                          options.busy_timeout_ms));
  if (check) {
    ASSIGN_OR_RETURN(int version, CheckStoreSchema(*db));
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
    RETURN_IF_ERROR(RunQuickCheck(*db));
  }
  return db;
}

// Keeps the code, says which operation failed.
absl::Status OpenError(const absl::Status& status) {
  return absl::Status(
      status.code(),
      absl::StrCat("cannot open the tunedb database: ", status.message()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const Options& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteStore> store,
                   SqliteStore::Open(options));
  return std::unique_ptr<Store>(std::move(store));
}

absl::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(
    const Options& options) {
  RETURN_IF_ERROR(ValidateOptions(options));
  const bool in_memory = options.path == ":memory:";
  if (options.read_only && !FileExists(options.path)) {
    return absl::NotFoundError(
        absl::StrCat("tunedb database ", options.path, " does not exist"));
  }
  std::unique_ptr<sql::Database> writer;
  if (!options.read_only) {
    absl::StatusOr<std::unique_ptr<sql::Database>> opened =
        OpenWriter(options, in_memory);
    if (!opened.ok()) return OpenError(opened.status());
    writer = *std::move(opened);
  }
  std::unique_ptr<sql::ConnectionPool> readers;
  int reader_count = in_memory ? 0 : options.read_connections;
  if (options.read_only) reader_count = std::max(reader_count, 1);
  if (reader_count > 0) {
    std::vector<std::unique_ptr<sql::Database>> connections;
    for (int i = 0; i < reader_count; ++i) {
      // The writer already checked the file; a read-only store checks it on
      // its first connection.
      absl::StatusOr<std::unique_ptr<sql::Database>> db =
          OpenReader(options, options.read_only && i == 0);
      if (!db.ok()) return OpenError(db.status());
      connections.push_back(*std::move(db));
    }
    readers = std::make_unique<sql::ConnectionPool>(std::move(connections));
  }
  return std::unique_ptr<SqliteStore>(
      new SqliteStore(options, std::move(writer), std::move(readers)));
}

SqliteStore::SqliteStore(Options options, std::unique_ptr<sql::Database> writer,
                         std::unique_ptr<sql::ConnectionPool> readers)
    : options_(std::move(options)),
      in_memory_(options_.path == ":memory:"),
      writer_(std::move(writer)),
      readers_(std::move(readers)) {}

SqliteStore::~SqliteStore() = default;

absl::Status SqliteStore::Read(const ReadFn& fn) {
  if (readers_ != nullptr) {
    sql::ConnectionPool::Lease db = readers_->Acquire();
    return fn(*db);
  }
  std::lock_guard<std::mutex> lock(write_mu_);
  return fn(*writer_);
}

absl::Status SqliteStore::Write(const WriteFn& fn) {
  if (writer_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(options_.path, " is open read-only"));
  }
  std::lock_guard<std::mutex> lock(write_mu_);
  {
    sql::Transaction transaction(writer_.get(),
                                 sql::Transaction::Kind::kImmediate);
    RETURN_IF_ERROR(transaction.Begin());
    RETURN_IF_ERROR(fn(*writer_));
    RETURN_IF_ERROR(transaction.Commit());
  }
  if (!in_memory_ && options_.checkpoint_every_writes > 0 &&
      ++writes_since_checkpoint_ >= options_.checkpoint_every_writes) {
    writes_since_checkpoint_ = 0;
    // The write is committed and durable already. A PASSIVE checkpoint does
    // what it can without waiting; if it cannot run now (another process is
    // checkpointing) the next one catches up, so its status is not the
    // caller's concern.
    writer_->Execute("PRAGMA wal_checkpoint(PASSIVE)").IgnoreError();
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Record>> SqliteStore::Get(const ProblemKey& key) {
  std::optional<Record> found;
  RETURN_IF_ERROR(Read([&](sql::Database& db) -> absl::Status {
    sql::Transaction snapshot(&db, sql::Transaction::Kind::kDeferred);
    RETURN_IF_ERROR(snapshot.Begin());
    {
      ASSIGN_OR_RETURN(sql::Statement get, db.GetCachedStatement(kGetRecord));
      const std::string key_text = key.ToText();
      get.BindInt64(1, static_cast<int64_t>(KeyTextHash(key_text)));
      get.BindText(2, key_text);
      get.BindInt(3, kKeyFormatVersion);
      ASSIGN_OR_RETURN(bool row, get.Step());
      if (row) {
        ASSIGN_OR_RETURN(Record record, ReadRecordRow(get, db.path()));
        RETURN_IF_ERROR(LoadResults(db, record));
        found = std::move(record);
      }
    }
    return snapshot.Commit();
  }));
  return found;
}

absl::StatusOr<int64_t> SqliteStore::Put(const Record& record) {
  int64_t id = 0;
  RETURN_IF_ERROR(Write([&](sql::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(id, PutRecord(db, record));
    return absl::OkStatus();
  }));
  return id;
}

absl::Status SqliteStore::PutAll(const std::vector<Record>& records) {
  return Write([&](sql::Database& db) -> absl::Status {
    for (const Record& record : records) {
      RETURN_IF_ERROR(PutRecord(db, record).status());
    }
    return absl::OkStatus();
  });
}

absl::Status SqliteStore::Query(
    const RecordFilter& filter, int64_t after_id, int limit,
    const std::function<bool(const Record&)>& visit) {
  RETURN_IF_ERROR(filter.Validate());
  int64_t cursor = after_id;
  int64_t remaining = limit > 0 ? limit : std::numeric_limits<int64_t>::max();
  while (remaining > 0) {
    const size_t want = static_cast<size_t>(
        std::min<int64_t>(remaining, static_cast<int64_t>(kQueryBatch)));
    std::vector<Record> batch;
    bool exhausted = false;
    RETURN_IF_ERROR(Read([&](sql::Database& db) -> absl::Status {
      sql::Transaction snapshot(&db, sql::Transaction::Kind::kDeferred);
      RETURN_IF_ERROR(snapshot.Begin());
      RETURN_IF_ERROR(ScanRecords(db, filter, want, /*with_results=*/true,
                                  &cursor, &batch, &exhausted));
      return snapshot.Commit();
    }));
    // No connection is held while the caller looks at the records.
    for (const Record& record : batch) {
      if (!visit(record)) return absl::OkStatus();
      --remaining;
    }
    if (exhausted) break;
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> SqliteStore::Delete(const RecordFilter& filter) {
  RETURN_IF_ERROR(filter.Validate());
  int64_t deleted = 0;
  RETURN_IF_ERROR(Write([&](sql::Database& db) -> absl::Status {
    if (filter.empty()) {
      ASSIGN_OR_RETURN(sql::Statement erase,
                       db.GetCachedStatement(kDeleteAllRecords));
      erase.BindInt(1, kKeyFormatVersion);
      RETURN_IF_ERROR(erase.Run());
      deleted = db.Changes();
      return absl::OkStatus();
    }
    // Collect first, delete after: the scan must not see its own deletes.
    std::vector<Record> matches;
    int64_t cursor = 0;
    bool exhausted = false;
    RETURN_IF_ERROR(ScanRecords(db, filter, std::numeric_limits<size_t>::max(),
                                /*with_results=*/false, &cursor, &matches,
                                &exhausted));
    ASSIGN_OR_RETURN(sql::Statement erase,
                     db.GetCachedStatement(kDeleteRecord));
    for (const Record& record : matches) {
      erase.Reset();
      erase.BindInt64(1, record.id);
      RETURN_IF_ERROR(erase.Run());
      deleted += db.Changes();
    }
    return absl::OkStatus();
  }));
  return deleted;
}

absl::Status SqliteStore::AddServed(
    const std::vector<std::pair<int64_t, int64_t>>& id_counts) {
  if (id_counts.empty()) return absl::OkStatus();
  const int64_t now_us = absl::ToUnixMicros(absl::Now());
  return Write([&](sql::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(sql::Statement update, db.GetCachedStatement(kAddServed));
    for (const auto& [id, count] : id_counts) {
      update.Reset();
      update.BindInt64(1, id);
      update.BindInt64(2, count);
      update.BindInt64(3, now_us);
      RETURN_IF_ERROR(update.Run());
    }
    return absl::OkStatus();
  });
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

int64_t SqliteStore::SizeBytes() const {
  if (in_memory_) return 0;
  return FileSize(options_.path) + FileSize(options_.path + "-wal");
}

absl::Status SqliteStore::QuickCheck() {
  return Read([](sql::Database& db) { return RunQuickCheck(db); });
}

absl::Status SqliteStore::Checkpoint() {
  if (writer_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(options_.path, " is open read-only"));
  }
  if (in_memory_) return absl::OkStatus();
  std::lock_guard<std::mutex> lock(write_mu_);
  ASSIGN_OR_RETURN(
      sql::Statement checkpoint,
      writer_->GetUniqueStatement("PRAGMA wal_checkpoint(TRUNCATE)"));
  ASSIGN_OR_RETURN(bool row, checkpoint.Step());
  writes_since_checkpoint_ = 0;
  if (row && checkpoint.ColumnInt(0) != 0) {
    return absl::UnavailableError(absl::StrCat(
        options_.path,
        ": WAL checkpoint incomplete: another connection is reading"));
  }
  return absl::OkStatus();
}

}  // namespace tunedb
