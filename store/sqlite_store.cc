#include "store/sqlite_store.h"

#include <sqlite3.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <variant>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "common/valid_key.h"
#include "store/import_receipts_sql.h"
#include "store/outbox_sql.h"
#include "store/sql/statement.h"
#include "store/sql/store_schema.h"
#include "store/sql/transaction.h"

namespace tunedb {
namespace {

// Query reads this many matching records per read transaction.
constexpr size_t kQueryBatch = 256;
// A staged import writes this many records per staging transaction, and
// Commit moves this many staged records per statement.
constexpr int64_t kStageBatch = 1000;
constexpr int64_t kCommitChunk = 20000;
// The write connection's page cache while an import commits, KiB.
constexpr int64_t kCommitCacheKib = 64 << 10;
// Staging databases attached to the write connection at once (SQLite
// attaches at most 10).
constexpr int kMaxParallelImports = 4;

// Columns of a record row, in the order ReadRecordKey and ReadRecordFields
// expect.
#define TUNEDB_RECORD_COLUMNS                                              \
  "id, key_text, measured_at_us, host, gpu_uuid, driver_version, finder, " \
  "repeats, workspace_cap_bytes, search_ms, verified, served_count, "      \
  "timing_version, key_hash, gpu_model, op, cudnn_version, in_type, "      \
  "layout"

// Columns a record write sets, in the order BindRecord binds them.
#define TUNEDB_RECORD_WRITE_COLUMNS                                         \
  "key_version, key_hash, key_text, gpu_model, cudnn_version, op, in_type," \
  " layout, measured_at_us, host, gpu_uuid, driver_version, finder,"        \
  " repeats, workspace_cap_bytes, search_ms, verified, served_count,"       \
  " timing_version"

// A record write replaces an existing row of its key in place (same id);
// served_count and last_served_us are left alone.
#define TUNEDB_RECORD_UPSERT                                                 \
  " ON CONFLICT(key_text) DO UPDATE SET"                                     \
  " key_version = excluded.key_version, key_hash = excluded.key_hash,"       \
  " gpu_model = excluded.gpu_model, cudnn_version = excluded.cudnn_version," \
  " op = excluded.op, in_type = excluded.in_type,"                           \
  " layout = excluded.layout, measured_at_us = excluded.measured_at_us,"     \
  " host = excluded.host, gpu_uuid = excluded.gpu_uuid,"                     \
  " driver_version = excluded.driver_version, finder = excluded.finder,"     \
  " repeats = excluded.repeats,"                                             \
  " workspace_cap_bytes = excluded.workspace_cap_bytes,"                     \
  " search_ms = excluded.search_ms, verified = excluded.verified,"           \
  " timing_version = excluded.timing_version"

// Columns of a result row after its record_id, in the order BindResult
// binds them.
#define TUNEDB_RESULT_WRITE_COLUMNS                                         \
  "rank, algo, math_type, status, workspace_bytes, deterministic, retimed," \
  " error, launch_median_ms, launch_spread_ms, launch_samples,"             \
  " gpu_median_ms, gpu_spread_ms, gpu_samples,"                             \
  " host_median_ms, host_spread_ms, host_samples,"                          \
  " knobs, numerical_notes, behavior_notes, plan"

constexpr int kRecordWriteColumns = 19;

constexpr const char kGetRecord[] =
    "SELECT " TUNEDB_RECORD_COLUMNS
    " FROM records INDEXED BY records_by_key_hash"
    " WHERE key_hash = ?1 AND key_text = ?2 AND key_version = ?3";

// A filter with a key hash is answered through the key-hash index.
constexpr const char kScanRecordsByHash[] =
    "SELECT " TUNEDB_RECORD_COLUMNS
    " FROM records INDEXED BY records_by_key_hash"
    " WHERE key_hash = ?3 AND key_version = ?1 AND id > ?2"
    " ORDER BY id";

constexpr const char kGetResults[] =
    "SELECT algo, math_type, status, workspace_bytes, deterministic, retimed,"
    " error, launch_median_ms, launch_spread_ms, launch_samples,"
    " gpu_median_ms, gpu_spread_ms, gpu_samples,"
    " host_median_ms, host_spread_ms, host_samples,"
    " knobs, numerical_notes, behavior_notes, plan"
    " FROM results WHERE record_id = ?1 ORDER BY rank";

constexpr const char kUpsertRecord[] =
    "INSERT INTO records(" TUNEDB_RECORD_WRITE_COLUMNS
    ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
    " ?15, ?16, ?17, ?18, ?19)" TUNEDB_RECORD_UPSERT " RETURNING id";

constexpr const char kDeleteResults[] =
    "DELETE FROM results WHERE record_id = ?1";

constexpr const char kInsertResult[] =
    "INSERT INTO results(record_id, " TUNEDB_RESULT_WRITE_COLUMNS
    ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
    " ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)";

// Results go with their record through ON DELETE CASCADE.
constexpr const char kDeleteRecord[] = "DELETE FROM records WHERE id = ?1";
constexpr const char kDeleteAllRecords[] =
    "DELETE FROM records WHERE key_version = ?1";

// Rows that cannot be read are moved here by QuarantineBadRows. The copied
// columns have no declared type, so every value keeps the storage class and
// bytes it had. Created on first use, outside the versioned schema: nothing
// but QuarantineBadRows reads or writes them.
constexpr const char kCreateQuarantine[] =
    "CREATE TABLE IF NOT EXISTS quarantined_records("
    " quarantine_id INTEGER PRIMARY KEY, quarantined_at_us INTEGER NOT NULL,"
    " reason TEXT NOT NULL, id, key_version, key_hash, key_text, gpu_model,"
    " cudnn_version, op, measured_at_us, host, gpu_uuid, driver_version,"
    " finder, repeats, workspace_cap_bytes, search_ms, verified, served_count,"
    " last_served_us, timing_version, in_type, layout);"
    "CREATE TABLE IF NOT EXISTS quarantined_results("
    " quarantine_id INTEGER NOT NULL, record_id, rank, algo, math_type,"
    " status, gpu_median_ms, gpu_spread_ms, gpu_samples, workspace_bytes,"
    " deterministic, retimed, error, launch_median_ms, launch_spread_ms,"
    " launch_samples, host_median_ms, host_spread_ms, host_samples, knobs,"
    " numerical_notes, behavior_notes, plan)";

constexpr const char kQuarantineRecord[] =
    "INSERT INTO quarantined_records(quarantined_at_us, reason, id,"
    " key_version, key_hash, key_text, gpu_model, cudnn_version, op,"
    " measured_at_us, host, gpu_uuid, driver_version, finder, repeats,"
    " workspace_cap_bytes, search_ms, verified, served_count, last_served_us,"
    " timing_version, in_type, layout)"
    " SELECT ?2, ?3, id, key_version, key_hash, key_text, gpu_model,"
    " cudnn_version, op, measured_at_us, host, gpu_uuid, driver_version,"
    " finder, repeats, workspace_cap_bytes, search_ms, verified, served_count,"
    " last_served_us, timing_version, in_type, layout FROM records"
    " WHERE id = ?1"
    " RETURNING quarantine_id";

constexpr const char kQuarantineResults[] =
    "INSERT INTO quarantined_results(quarantine_id, record_id, rank, algo,"
    " math_type, status, gpu_median_ms, gpu_spread_ms, gpu_samples,"
    " workspace_bytes, deterministic, retimed, error, launch_median_ms,"
    " launch_spread_ms, launch_samples, host_median_ms, host_spread_ms,"
    " host_samples, knobs, numerical_notes, behavior_notes, plan)"
    " SELECT ?2, record_id, rank, algo, math_type, status, gpu_median_ms,"
    " gpu_spread_ms, gpu_samples, workspace_bytes, deterministic, retimed,"
    " error, launch_median_ms, launch_spread_ms, launch_samples,"
    " host_median_ms, host_spread_ms, host_samples, knobs, numerical_notes,"
    " behavior_notes, plan"
    " FROM results WHERE record_id = ?1";

// Columns that the quarantine tables gained after they were first made
// (schema 4's in_type and layout, schema 5's engine config): a file
// quarantined under an older schema has the tables without them.
constexpr std::pair<const char*, const char*> kQuarantineLaterColumns[] = {
    {"quarantined_records", "in_type"},
    {"quarantined_records", "layout"},
    {"quarantined_results", "knobs"},
    {"quarantined_results", "numerical_notes"},
    {"quarantined_results", "behavior_notes"},
    {"quarantined_results", "plan"}};

absl::Status CreateQuarantine(sql::Database& db) {
  RETURN_IF_ERROR(db.Execute(kCreateQuarantine));
  for (const auto& [table, column] : kQuarantineLaterColumns) {
    ASSIGN_OR_RETURN(const int64_t present,
                     db.QueryInt64(absl::StrCat(
                         "SELECT COUNT(*) FROM pragma_table_info('", table,
                         "') WHERE name = '", column, "'")));
    if (present == 0) {
      RETURN_IF_ERROR(db.Execute(
          absl::StrCat("ALTER TABLE ", table, " ADD COLUMN ", column)));
    }
  }
  return absl::OkStatus();
}

constexpr const char kAddServed[] =
    "UPDATE records SET served_count = served_count + ?2,"
    " last_served_us = ?3 WHERE id = ?1";

constexpr const char kCountRecords[] =
    "SELECT COUNT(*) FROM records WHERE key_version = ?1";

// The staging database of one import, attached to the write connection as
// `name`: the records as they will be written (stage_id: the order they
// came in; a later one of the same key replaces an earlier one) and their
// results, keyed by stage_id.
std::string StagingSchema(const std::string& name) {
  return absl::StrCat(
      "PRAGMA ", name, ".journal_mode = OFF; PRAGMA ", name,
      ".synchronous = OFF;"
      " CREATE TABLE ",
      name, ".records(stage_id INTEGER PRIMARY KEY, ",
      TUNEDB_RECORD_WRITE_COLUMNS, "); CREATE UNIQUE INDEX ", name,
      ".records_by_key_text ON records(key_text); CREATE TABLE ", name,
      ".results(stage_id INTEGER NOT NULL, ", TUNEDB_RESULT_WRITE_COLUMNS,
      ", PRIMARY KEY(stage_id, rank)) WITHOUT ROWID;");
}

std::string StageRecordSql(const std::string& name) {
  return absl::StrCat("INSERT OR REPLACE INTO ", name, ".records(stage_id, ",
                      TUNEDB_RECORD_WRITE_COLUMNS,
                      ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,"
                      " ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)");
}

std::string StageResultSql(const std::string& name) {
  return absl::StrCat("INSERT INTO ", name, ".results(stage_id, ",
                      TUNEDB_RESULT_WRITE_COLUMNS,
                      ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,"
                      " ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,"
                      " ?22)");
}

// The three statements that move the staged records with stage_id in
// (?1, ?2] into the store, as Put would: upsert the records (in stage
// order), drop the old results of replaced ones, insert the new results.
std::vector<std::string> CommitChunkSql(const std::string& name) {
  const std::string range = " s.stage_id > ?1 AND s.stage_id <= ?2";
  return {
      absl::StrCat("INSERT INTO main.records(", TUNEDB_RECORD_WRITE_COLUMNS,
                   ") SELECT ", TUNEDB_RECORD_WRITE_COLUMNS, " FROM ", name,
                   ".records AS s WHERE", range, " ORDER BY s.stage_id",
                   TUNEDB_RECORD_UPSERT),
      absl::StrCat("DELETE FROM main.results WHERE record_id IN (SELECT r.id"
                   " FROM ",
                   name,
                   ".records AS s JOIN main.records AS r"
                   " ON r.key_text = s.key_text WHERE",
                   range, ")"),
      absl::StrCat("INSERT INTO main.results(record_id, ",
                   TUNEDB_RESULT_WRITE_COLUMNS, ") SELECT r.id, ",
                   TUNEDB_RESULT_WRITE_COLUMNS, " FROM ", name,
                   ".records AS s JOIN ", name,
                   ".results AS sr ON sr.stage_id = s.stage_id"
                   " JOIN main.records AS r ON r.key_text = s.key_text WHERE",
                   range),
  };
}

// The start of a scan without a key hash (see ScanSql).
constexpr const char kScanRecordsFrom[] =
    "SELECT " TUNEDB_RECORD_COLUMNS
    " FROM records WHERE key_version = ?1 AND id > ?2";

#undef TUNEDB_RECORD_COLUMNS
#undef TUNEDB_RECORD_WRITE_COLUMNS
#undef TUNEDB_RECORD_UPSERT
#undef TUNEDB_RESULT_WRITE_COLUMNS

// A key field a filter finds through an index: the filter field, the
// records column and whether the column holds the cuDNN version number
// rather than the field's text.
struct IndexedField {
  const char* field;
  const char* column;
  bool cudnn_version;
};
constexpr IndexedField kIndexedFields[] = {
    {"gpu", "gpu_model", false}, {"cudnn", "cudnn_version", true},
    {"op", "op", false},         {"in_type", "in_type", false},
    {"layout", "layout", false},
};

// The cuDNN version number whose key text is `text` ("9.19.0" -> 91900), or
// nullopt where no key spells its version so (such a filter matches none).
std::optional<int64_t> CudnnVersionFromText(absl::string_view text) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, '.');
  if (parts.size() != 3) return std::nullopt;
  int64_t version = 0;
  for (absl::string_view part : parts) {
    int value = 0;
    if (!absl::SimpleAtoi(part, &value) || value < 0) return std::nullopt;
    version = version * 100 + value;
  }
  if (version > std::numeric_limits<int>::max() ||
      CudnnVersionText(static_cast<int>(version)) != text) {
    return std::nullopt;
  }
  return version;
}

int64_t FileSize(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return 0;
  return static_cast<int64_t>(st.st_size);
}

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// The folder a file name lies in ("." for a bare name).
std::string FolderOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// True if `text` is well-formed UTF-8 (no overlong forms or surrogates).
bool IsUtf8(absl::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    size_t length = 0;
    uint32_t code = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      length = 2;
      code = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      length = 3;
      code = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      length = 4;
      code = c & 0x07;
    } else {
      return false;
    }
    if (i + length > text.size()) return false;
    for (size_t k = 1; k < length; ++k) {
      const unsigned char next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xc0) != 0x80) return false;
      code = (code << 6) | (next & 0x3f);
    }
    constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < kMin[length] || code > 0x10ffff ||
        (code >= 0xd800 && code <= 0xdfff)) {
      return false;
    }
    i += length;
  }
  return true;
}

// Reads the columns of one stored row, checking each value's storage class
// and range. The first problem is kept, naming the column as
// "<prefix><name>", and the value read is then a default.
class RowReader {
 public:
  RowReader(const sql::Statement& row, std::string prefix)
      : row_(row), prefix_(std::move(prefix)) {}

  int64_t Int(int column, absl::string_view name) {
    if (!Is(column, name, sql::Statement::ColumnType::kInteger, "an integer")) {
      return 0;
    }
    return row_.ColumnInt64(column);
  }
  // An integer that must not be negative.
  int64_t Count(int column, absl::string_view name) {
    const int64_t value = Int(column, name);
    if (value >= 0) return value;
    Fail(name, absl::StrCat("is ", value, ", negative"));
    return 0;
  }
  bool Bool(int column, absl::string_view name) {
    const int64_t value = Int(column, name);
    if (value != 0 && value != 1) Fail(name, absl::StrCat("is ", value));
    return value == 1;
  }
  // A time in milliseconds: finite and not negative.
  double Time(int column, absl::string_view name) {
    const auto type = row_.GetColumnType(column);
    if (type != sql::Statement::ColumnType::kFloat &&
        type != sql::Statement::ColumnType::kInteger) {
      Is(column, name, sql::Statement::ColumnType::kFloat, "a number");
      return 0;
    }
    const double value = row_.ColumnDouble(column);
    if (std::isfinite(value) && value >= 0) return value;
    Fail(name, absl::StrCat("is ", value));
    return 0;
  }
  // Text that is well-formed UTF-8.
  std::string Text(int column, absl::string_view name) {
    if (!Is(column, name, sql::Statement::ColumnType::kText, "text")) {
      return std::string();
    }
    std::string text = row_.ColumnText(column);
    if (IsUtf8(text)) return text;
    Fail(name,
         absl::StrCat("\"", absl::CHexEscape(text), "\" is not valid UTF-8"));
    return std::string();
  }
  // A name that `parse` knows (an enum's text form).
  template <typename T>
  T Name(int column, absl::string_view name,
         absl::StatusOr<T> (*parse)(absl::string_view)) {
    const std::string text = Text(column, name);
    absl::StatusOr<T> value = parse(text);
    if (value.ok()) return *value;
    if (problem_.empty()) {
      Fail(name, absl::StrCat("\"", absl::CHexEscape(text), "\" is unknown"));
    }
    return T();
  }

  void Fail(absl::string_view name, absl::string_view problem) {
    if (problem_.empty()) problem_ = absl::StrCat(prefix_, name, " ", problem);
  }
  // Empty when every value read so far was sound.
  const std::string& problem() const { return problem_; }

 private:
  bool Is(int column, absl::string_view name, sql::Statement::ColumnType want,
          absl::string_view what) {
    if (row_.GetColumnType(column) == want) return true;
    Fail(name, absl::StrCat("is not ", what));
    return false;
  }

  const sql::Statement& row_;
  const std::string prefix_;
  std::string problem_;
};

// The key of a record row (TUNEDB_RECORD_COLUMNS): the key text must parse
// and agree with the columns stored beside it (key hash, and the indexed
// key fields: GPU model, op, cuDNN version, input type, layout), since
// scans select rows by those columns.
absl::StatusOr<ProblemKey> ReadRecordKey(const sql::Statement& row) {
  RowReader reader(row, "");
  const std::string text = reader.Text(1, "key_text");
  const int64_t hash = reader.Int(13, "key_hash");
  const std::string gpu_model = reader.Text(14, "gpu_model");
  const std::string op = reader.Text(15, "op");
  const int64_t cudnn_version = reader.Int(16, "cudnn_version");
  const std::string in_type = reader.Text(17, "in_type");
  const std::string layout = reader.Text(18, "layout");
  if (!reader.problem().empty()) return absl::DataLossError(reader.problem());
  absl::StatusOr<ProblemKey> key = ProblemKey::Parse(text);
  if (!key.ok()) {
    return absl::DataLossError(
        absl::StrCat("key_text does not parse: ", key.status().message()));
  }
  if (static_cast<int64_t>(key->Hash()) != hash) {
    return absl::DataLossError(
        "key_hash does not match key_text (one of them is damaged)");
  }
  if (gpu_model != key->device.gpu_model || op != ConvOpName(key->problem.op)) {
    return absl::DataLossError(
        absl::StrCat("gpu_model \"", absl::CHexEscape(gpu_model), "\" or op \"",
                     absl::CHexEscape(op), "\" does not match key_text"));
  }
  if (cudnn_version != key->device.cudnn_version ||
      in_type != DataTypeName(key->problem.input_type) ||
      layout != LayoutName(key->problem.layout)) {
    return absl::DataLossError(
        absl::StrCat("cudnn_version ", cudnn_version, ", in_type \"",
                     absl::CHexEscape(in_type), "\" or layout \"",
                     absl::CHexEscape(layout), "\" does not match key_text"));
  }
  return *std::move(key);
}

// The rest of a record row whose key was read, without its results.
absl::Status ReadRecordFields(const sql::Statement& row, Record& record) {
  RowReader reader(row, "");
  record.measured_at_us = reader.Count(2, "measured_at_us");
  record.host = reader.Text(3, "host");
  record.gpu_uuid = reader.Text(4, "gpu_uuid");
  record.driver_version = reader.Text(5, "driver_version");
  record.finder = reader.Text(6, "finder");
  record.repeats = static_cast<int>(reader.Count(7, "repeats"));
  record.workspace_cap_bytes = reader.Count(8, "workspace_cap_bytes");
  record.search_ms = reader.Time(9, "search_ms");
  record.verified = reader.Bool(10, "verified");
  record.served_count = reader.Count(11, "served_count");
  record.timing_version = static_cast<int>(reader.Count(12, "timing_version"));
  if (record.timing_version < 1) reader.Fail("timing_version", "is 0");
  if (!reader.problem().empty()) return absl::DataLossError(reader.problem());
  return absl::OkStatus();
}

absl::Status LoadResults(sql::Database& db, Record& record) {
  ASSIGN_OR_RETURN(sql::Statement statement,
                   db.GetCachedStatement(kGetResults));
  statement.BindInt64(1, record.id);
  record.results.clear();
  while (true) {
    ASSIGN_OR_RETURN(bool row, statement.Step());
    if (!row) return absl::OkStatus();
    RowReader reader(statement,
                     absl::StrCat("results[", record.results.size(), "]."));
    AlgoResult result;
    result.algo = static_cast<int>(reader.Count(0, "algo"));
    result.math_type = reader.Name(1, "math_type", &ParseMathType);
    result.status = reader.Name(2, "status", &ParseAlgoStatus);
    result.workspace_bytes = reader.Count(3, "workspace_bytes");
    result.deterministic = reader.Bool(4, "deterministic");
    result.retimed = reader.Bool(5, "retimed");
    result.error = reader.Text(6, "error");
    int column = 7;
    for (auto [timing, name] :
         {std::pair{&result.launch, "launch"}, std::pair{&result.gpu, "gpu"},
          std::pair{&result.host, "host"}}) {
      timing->median_ms =
          reader.Time(column++, absl::StrCat(name, "_median_ms"));
      timing->spread_ms =
          reader.Time(column++, absl::StrCat(name, "_spread_ms"));
      timing->samples = static_cast<int>(
          reader.Count(column++, absl::StrCat(name, "_samples")));
    }
    absl::StatusOr<std::vector<Knob>> knobs =
        ParseKnobs(reader.Text(column++, "knobs"));
    if (knobs.ok()) {
      result.knobs = std::move(*knobs);
    } else {
      reader.Fail("knobs", knobs.status().message());
    }
    result.numerical_notes =
        static_cast<uint32_t>(reader.Count(column++, "numerical_notes"));
    result.behavior_notes =
        static_cast<uint32_t>(reader.Count(column++, "behavior_notes"));
    result.plan = reader.Text(column++, "plan");
    if (!reader.problem().empty()) return absl::DataLossError(reader.problem());
    record.results.push_back(std::move(result));
  }
}

// A record row (TUNEDB_RECORD_COLUMNS) with its results; DATA_LOSS saying
// what is wrong (without the row id) if it cannot be read.
absl::StatusOr<Record> ReadRecord(sql::Database& db,
                                  const sql::Statement& row) {
  Record record;
  record.id = row.ColumnInt64(0);
  ASSIGN_OR_RETURN(record.key, ReadRecordKey(row));
  RETURN_IF_ERROR(ReadRecordFields(row, record));
  RETURN_IF_ERROR(LoadResults(db, record));
  return record;
}

// The BadRow for a row that ReadRecordKey or ReadRecord refused.
BadRow MakeBadRow(const sql::Statement& row, const absl::Status& status) {
  return BadRow{row.ColumnInt64(0), absl::CHexEscape(row.ColumnText(1)),
                std::string(status.message())};
}

absl::Status BadRowStatus(const std::string& path, const BadRow& bad) {
  return absl::DataLossError(
      absl::StrCat(path, ": record ", bad.id, " cannot be read: ", bad.reason));
}

// Binds the TUNEDB_RECORD_WRITE_COLUMNS of `record` to parameters
// first .. first + kRecordWriteColumns - 1.
void BindRecord(sql::Statement& statement, int first, const Record& record,
                const std::string& key_text) {
  const ConvProblem& problem = record.key.problem;
  int param = first;
  statement.BindInt(param++, kKeyFormatVersion);
  statement.BindInt64(param++, static_cast<int64_t>(KeyTextHash(key_text)));
  statement.BindText(param++, key_text);
  statement.BindText(param++, record.key.device.gpu_model);
  statement.BindInt(param++, record.key.device.cudnn_version);
  statement.BindText(param++, ConvOpName(problem.op));
  statement.BindText(param++, DataTypeName(problem.input_type));
  statement.BindText(param++, LayoutName(problem.layout));
  statement.BindInt64(param++, record.measured_at_us);
  statement.BindText(param++, record.host);
  statement.BindText(param++, record.gpu_uuid);
  statement.BindText(param++, record.driver_version);
  statement.BindText(param++, record.finder);
  statement.BindInt(param++, record.repeats);
  statement.BindInt64(param++, record.workspace_cap_bytes);
  statement.BindDouble(param++, record.search_ms);
  statement.BindBool(param++, record.verified);
  statement.BindInt64(param++, record.served_count);
  statement.BindInt(param++, record.timing_version);
}

// Binds `rank` and the TUNEDB_RESULT_WRITE_COLUMNS of `result` from
// parameter 2 on (parameter 1 is the record's id or stage_id).
void BindResult(sql::Statement& statement, size_t rank,
                const AlgoResult& result) {
  statement.BindInt64(2, static_cast<int64_t>(rank));
  statement.BindInt(3, result.algo);
  statement.BindText(4, MathTypeName(result.math_type));
  statement.BindText(5, AlgoStatusName(result.status));
  statement.BindInt64(6, result.workspace_bytes);
  statement.BindBool(7, result.deterministic);
  statement.BindBool(8, result.retimed);
  statement.BindText(9, result.error);
  int param = 10;
  for (const Timing* timing : {&result.launch, &result.gpu, &result.host}) {
    statement.BindDouble(param++, timing->median_ms);
    statement.BindDouble(param++, timing->spread_ms);
    statement.BindInt(param++, timing->samples);
  }
  statement.BindText(param++, KnobsText(result.knobs));
  statement.BindInt64(param++, result.numerical_notes);
  statement.BindInt64(param++, result.behavior_notes);
  statement.BindText(param++, result.plan);
}

// Writes `record`'s results under `id` (a record id, or a stage_id) with
// `insert` (kInsertResult or StageResultSql).
absl::Status InsertResults(sql::Statement& insert, int64_t id,
                           const Record& record) {
  for (size_t rank = 0; rank < record.results.size(); ++rank) {
    insert.Reset();
    insert.BindInt64(1, id);
    BindResult(insert, rank, record.results[rank]);
    RETURN_IF_ERROR(insert.Run());
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> PutRecord(sql::Database& db, const Record& record) {
  RETURN_IF_ERROR(record.key.Validate());
  const std::string key_text = record.key.ToText();
  int64_t id = 0;
  {
    ASSIGN_OR_RETURN(sql::Statement upsert,
                     db.GetCachedStatement(kUpsertRecord));
    BindRecord(upsert, 1, record, key_text);
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
  RETURN_IF_ERROR(InsertResults(insert, id, record));
  return id;
}

// True for the error of a write that met an index entry disagreeing with
// its table row (SQLITE_CORRUPT_INDEX): quick_check does not compare the
// two, so a byte flipped in an indexed column of a stored row shows only
// when that row's index entries are changed.
bool IsIndexCorruption(const absl::Status& status) {
  return absl::IsFailedPrecondition(status) &&
         absl::StrContains(
             status.message(),
             absl::StrCat("(SQLite code ", SQLITE_CORRUPT_INDEX, ")"));
}

// Rebuilds the indexes of records and results from their rows (in the
// caller's transaction): afterwards every index entry agrees with its row.
absl::Status RebuildRecordIndexes(sql::Database& db) {
  return db.Execute("REINDEX main.records; REINDEX main.results");
}

// A value bound to a scan: an integer, a text, or neither (NULL: a cuDNN
// version that no key spells so, which matches nothing).
struct ScanValue {
  int param = 0;
  std::optional<int64_t> integer;
  std::optional<std::string> text;
};

// The scan for a filter without a key hash: the indexed key fields it names
// and its time range become conditions (so SQLite reads through the index
// of a named field), in parameters from ?3 on, whose values go to `values`.
// RecordFilter::Matches checks every field afterwards anyway.
std::string ScanSql(const RecordFilter& filter,
                    std::vector<ScanValue>* values) {
  std::string sql = kScanRecordsFrom;
  int param = 3;
  for (const IndexedField& indexed : kIndexedFields) {
    auto it = filter.fields.find(indexed.field);
    if (it == filter.fields.end()) continue;
    absl::StrAppend(&sql, " AND ", indexed.column, " = ?", param);
    ScanValue value{param++, std::nullopt, std::nullopt};
    if (indexed.cudnn_version) {
      value.integer = CudnnVersionFromText(it->second);
    } else {
      value.text = it->second;
    }
    values->push_back(std::move(value));
  }
  if (filter.since_us != 0 || filter.until_us != 0) {
    absl::StrAppend(&sql, " AND measured_at_us >= ?", param,
                    " AND measured_at_us < ?", param + 1);
    values->push_back({param++,
                       filter.since_us != 0
                           ? filter.since_us
                           : std::numeric_limits<int64_t>::min(),
                       std::nullopt});
    values->push_back({param++,
                       filter.until_us != 0
                           ? filter.until_us
                           : std::numeric_limits<int64_t>::max(),
                       std::nullopt});
  }
  absl::StrAppend(&sql, " ORDER BY id");
  return sql;
}

// One row a scan read: a record, or a row that cannot be read.
using ScannedRow = std::variant<Record, BadRow>;

// Reads matching rows with id > *cursor, in id order, until `want` are found
// or the table ends (*exhausted). Advances *cursor past every row read.
// Results are loaded only `with_results`. A row that cannot be read is
// returned as a BadRow (see Store::Query for which ones). Runs in the
// caller's transaction.
absl::Status ScanRecords(sql::Database& db, const RecordFilter& filter,
                         size_t want, bool with_results, int64_t* cursor,
                         std::vector<ScannedRow>* out, bool* exhausted) {
  const std::optional<uint64_t> hash = filter.KeyHash();
  std::vector<ScanValue> values;
  // One cached statement per combination of named fields: a few dozen.
  const std::string sql =
      hash ? std::string(kScanRecordsByHash) : ScanSql(filter, &values);
  ASSIGN_OR_RETURN(sql::Statement scan, db.GetCachedStatement(sql));
  scan.BindInt(1, kKeyFormatVersion);
  scan.BindInt64(2, *cursor);
  if (hash) {
    // The rest of the filter (other fields, time range) is checked by
    // Matches() below.
    scan.BindInt64(3, static_cast<int64_t>(*hash));
  }
  for (const ScanValue& value : values) {
    if (value.integer) {
      scan.BindInt64(value.param, *value.integer);
    } else if (value.text) {
      scan.BindText(value.param, *value.text);
    } else {
      scan.BindNull(value.param);
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
    *cursor = scan.ColumnInt64(0);
    Record record;
    record.id = *cursor;
    absl::StatusOr<ProblemKey> key = ReadRecordKey(scan);
    absl::Status read = key.status();
    if (key.ok()) {
      record.key = *std::move(key);
      read = ReadRecordFields(scan, record);
      // A record the filter rejects is skipped even if its results are bad.
      if (read.ok() && !filter.Matches(record)) continue;
      if (read.ok() && with_results) read = LoadResults(db, record);
    }
    if (absl::IsDataLoss(read)) {
      out->push_back(MakeBadRow(scan, read));
    } else {
      RETURN_IF_ERROR(read);
      out->push_back(std::move(record));
    }
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
  if (options.file_mode > 0777) {
    return absl::InvalidArgumentError(
        "store file_mode has bits beyond the permissions (0777)");
  }
  if (options.read_only && options.path == ":memory:") {
    return absl::InvalidArgumentError(
        "a read-only store cannot be in memory (it would always be empty)");
  }
  return absl::OkStatus();
}

// Creates the database file with `mode` (not the umask's) if it does not
// exist yet, so SQLite opens an empty file of those permissions and gives
// its WAL and shared-memory files the same.
absl::Status CreateWithMode(const std::string& path, unsigned mode) {
  if (path == ":memory:" || absl::StartsWith(path, "file:")) {
    return absl::OkStatus();
  }
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                      static_cast<mode_t>(mode));
  // An existing file keeps its mode; any other failure, SQLite's own open
  // reports with its cause.
  if (fd < 0) return absl::OkStatus();
  const bool set = fchmod(fd, static_cast<mode_t>(mode)) == 0;
  const int saved = errno;
  close(fd);
  if (!set) {
    return absl::InternalError(absl::StrCat("chmod ", path, ": ",
                                            std::strerror(saved)));
  }
  return absl::OkStatus();
}

// Opens, checks and (if needed) creates or migrates the write connection.
absl::StatusOr<std::unique_ptr<sql::Database>> OpenWriter(
    const Store::Options& options, bool in_memory) {
  RETURN_IF_ERROR(CreateWithMode(options.path, options.file_mode));
  ASSIGN_OR_RETURN(
      std::unique_ptr<sql::Database> db,
      sql::Database::Open(options.path, sql::Database::Mode::kReadWriteCreate,
                          options.busy_timeout_ms));
  // Identity first: nothing may be written to another application's file.
  ASSIGN_OR_RETURN(int version, CheckStoreSchema(*db));
  if (version > 0) RETURN_IF_ERROR(CheckStoreFile(*db));
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

// The name a read connection opens `path` by. On a read-only file system
// SQLite cannot create the WAL's shared-memory file beside the database,
// and no process can change the file there, so it is opened as immutable
// (a URI with immutable=1), unless a WAL left behind there holds commits
// the file lacks: that is FAILED_PRECONDITION naming both.
absl::StatusOr<std::string> ReaderName(const std::string& path) {
  struct statvfs fs;
  if (path == ":memory:" || absl::StartsWith(path, "file:") ||
      statvfs(FolderOf(path).c_str(), &fs) != 0 ||
      (fs.f_flag & ST_RDONLY) == 0) {
    return path;
  }
  if (FileSize(path + "-wal") > 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("the tunedb database ", path,
                     " is on a read-only file system and its WAL ", path,
                     "-wal holds writes not yet in the database file; mount it "
                     "read-write once (opening it then folds the WAL in)"));
  }
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      absl::StrAppend(&uri, absl::StrFormat("%%%02X", c));
    } else {
      uri += c;
    }
  }
  return absl::StrCat(uri, "?immutable=1");
}

// Opens a read-only connection; with `check`, also verifies the file is a
// current tunedb database that passes quick_check.
absl::StatusOr<std::unique_ptr<sql::Database>> OpenReader(
    const Store::Options& options, bool check) {
  ASSIGN_OR_RETURN(const std::string name, ReaderName(options.path));
  ASSIGN_OR_RETURN(std::unique_ptr<sql::Database> db,
                   sql::Database::Open(name, sql::Database::Mode::kReadOnly,
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
    RETURN_IF_ERROR(CheckStoreFile(*db));
  }
  return db;
}

// Why `path` cannot be opened for writing, where the file system says so
// before SQLite does (SQLite reports only "unable to open database file" or
// "attempt to write a readonly database", with the statement that met it):
// a read-only file system is FAILED_PRECONDITION, a file or folder that may
// not be written PERMISSION_DENIED. OK where nothing stands in the way.
// SQLite also writes the folder: the WAL and its shared-memory index lie
// beside the file.
absl::Status CheckWritable(const std::string& path) {
  if (path == ":memory:" || absl::StartsWith(path, "file:")) {
    return absl::OkStatus();
  }
  auto writable = [&path](const std::string& target,
                          const std::string& what) -> absl::Status {
    if (access(target.c_str(), W_OK) == 0) return absl::OkStatus();
    const int error = errno;
    if (error == EROFS) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the tunedb database ", path, " cannot be written: ", what,
          " is on a read-only file system (EROFS). Mount it read-write, or "
          "open the database read-only (tunedb doctor --db, "
          "ClientOptions::db_path)"));
    }
    if (error == EACCES || error == EPERM) {
      return absl::PermissionDeniedError(absl::StrCat(
          "the tunedb database ", path, " cannot be written: ", what,
          " may not be written by this user (", std::strerror(error),
          "). Run as the database's owner, or open it read-only"));
    }
    return absl::OkStatus();  // ENOENT and others: SQLite says it
  };
  if (FileExists(path)) {
    RETURN_IF_ERROR(writable(path, absl::StrCat("the file ", path)));
  }
  const std::string folder = FolderOf(path);
  return writable(folder, absl::StrCat("its folder ", folder));
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
    RETURN_IF_ERROR(CheckWritable(options.path));
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

absl::Status SqliteStore::Exclusive(const WriteFn& fn) {
  if (writer_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(options_.path, " is open read-only"));
  }
  std::lock_guard<std::mutex> lock(write_mu_);
  return fn(*writer_);
}

absl::Status SqliteStore::Write(const WriteFn& fn, bool truncate_wal) {
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
  if (in_memory_) return absl::OkStatus();
  // The write is committed and durable already; what follows only keeps the
  // WAL small, and a checkpoint that cannot finish now (a reader still
  // needs the WAL, another process checkpoints) is retried after a later
  // write, so its status is not the caller's concern.
  if (truncate_wal ||
      (options_.checkpoint_wal_bytes > 0 &&
       FileSize(options_.path + "-wal") > options_.checkpoint_wal_bytes)) {
    TruncateWal().IgnoreError();
  } else if (options_.checkpoint_every_writes > 0 &&
             ++writes_since_checkpoint_ >= options_.checkpoint_every_writes) {
    writes_since_checkpoint_ = 0;
    // A PASSIVE checkpoint does what it can without waiting.
    writer_->Execute("PRAGMA wal_checkpoint(PASSIVE)").IgnoreError();
  }
  return absl::OkStatus();
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

// The StagedImport of a SqliteStore: a private temporary database attached
// to the write connection as `name_` (SQLite deletes its file when it is
// detached, or when the process ends).
class SqliteStore::Import : public Store::StagedImport {
 public:
  Import(SqliteStore* store, std::string name)
      : store_(store), name_(std::move(name)) {}
  Import(const Import&) = delete;
  Import& operator=(const Import&) = delete;
  ~Import() override { store_->EndImport(name_); }

  absl::Status Add(const Record& record) override {
    RETURN_IF_ERROR(Usable());
    status_ = record.key.Validate();
    RETURN_IF_ERROR(status_);
    pending_.push_back(record);
    ++added_;
    if (static_cast<int64_t>(pending_.size()) >= kStageBatch) {
      status_ = Flush();
    }
    return status_;
  }

  int64_t added() const override { return added_; }

  absl::StatusOr<int64_t> Commit(const ImportTag& tag) override {
    RETURN_IF_ERROR(Usable());
    status_ = Flush();
    RETURN_IF_ERROR(status_);
    committed_ = true;
    const int64_t last = next_stage_id_;
    RETURN_IF_ERROR(store_->WriteRecords(
        [&](sql::Database& db) -> absl::Status {
          std::vector<sql::Statement> steps;
          for (const std::string& sql : CommitChunkSql(name_)) {
            ASSIGN_OR_RETURN(sql::Statement step, db.GetUniqueStatement(sql));
            steps.push_back(std::move(step));
          }
          // The indexes of records take keys in no particular order: a
          // larger page cache for the commit saves most of the rereads of
          // their pages from the WAL. Bounded (kCommitCacheKib), and
          // given back afterwards.
          ASSIGN_OR_RETURN(const int64_t cache,
                           db.QueryInt64("PRAGMA main.cache_size"));
          RETURN_IF_ERROR(db.Execute(
              absl::StrCat("PRAGMA main.cache_size = -", kCommitCacheKib)));
          absl::Status moved = absl::OkStatus();
          for (int64_t low = 0; low < last && moved.ok(); low += kCommitChunk) {
            for (sql::Statement& step : steps) {
              step.Reset();
              step.BindInt64(1, low);
              step.BindInt64(2, low + kCommitChunk);
              moved = step.Run();
              if (!moved.ok()) break;
            }
          }
          db.Execute(absl::StrCat("PRAGMA main.cache_size = ", cache))
              .IgnoreError();
          if (!moved.ok() || tag.id.empty()) return moved;
          return WriteImportReceipt(db, tag, added_);
        },
        /*truncate_wal=*/true));
    return added_;
  }

 private:
  absl::Status Usable() const {
    if (committed_) {
      return absl::FailedPreconditionError("the import is committed already");
    }
    return status_;
  }

  // Stages the pending records in one transaction.
  absl::Status Flush() {
    if (pending_.empty()) return absl::OkStatus();
    RETURN_IF_ERROR(store_->Write([&](sql::Database& db) -> absl::Status {
      ASSIGN_OR_RETURN(sql::Statement stage_record,
                       db.GetUniqueStatement(StageRecordSql(name_)));
      ASSIGN_OR_RETURN(sql::Statement stage_result,
                       db.GetUniqueStatement(StageResultSql(name_)));
      for (const Record& record : pending_) {
        const int64_t stage_id = ++next_stage_id_;
        stage_record.Reset();
        stage_record.BindInt64(1, stage_id);
        BindRecord(stage_record, 2, record, record.key.ToText());
        RETURN_IF_ERROR(stage_record.Run());
        RETURN_IF_ERROR(InsertResults(stage_result, stage_id, record));
      }
      return absl::OkStatus();
    }));
    pending_.clear();
    return absl::OkStatus();
  }

  SqliteStore* const store_;
  const std::string name_;
  std::vector<Record> pending_;  // added, not staged yet
  int64_t added_ = 0;
  int64_t next_stage_id_ = 0;
  bool committed_ = false;
  absl::Status status_;  // the first error; the import is then unusable
};

absl::StatusOr<std::unique_ptr<Store::StagedImport>>
SqliteStore::BeginImport() {
  std::string name;
  RETURN_IF_ERROR(Exclusive([&](sql::Database& db) -> absl::Status {
    if (imports_ >= kMaxParallelImports) {
      return absl::UnavailableError(
          absl::StrCat(kMaxParallelImports,
                       " imports are running already; try again later"));
    }
    name = absl::StrCat("import_", ++next_import_);
    // '' is a private temporary database: a file in SQLite's temporary
    // folder, deleted when it is detached.
    RETURN_IF_ERROR(db.Execute(absl::StrCat("ATTACH DATABASE '' AS ", name)));
    absl::Status created = db.Execute(StagingSchema(name));
    if (!created.ok()) {
      db.Execute(absl::StrCat("DETACH DATABASE ", name)).IgnoreError();
      return created;
    }
    ++imports_;
    return absl::OkStatus();
  }));
  return std::unique_ptr<Store::StagedImport>(new Import(this, name));
}

void SqliteStore::EndImport(const std::string& name) {
  // Only a statement still running on the staging database stops DETACH,
  // and none runs outside the write mutex.
  Exclusive([&](sql::Database& db) {
    --imports_;
    return db.Execute(absl::StrCat("DETACH DATABASE ", name));
  }).IgnoreError();
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
        absl::StatusOr<Record> record = ReadRecord(db, get);
        if (absl::IsDataLoss(record.status())) {
          return BadRowStatus(db.path(), MakeBadRow(get, record.status()));
        }
        RETURN_IF_ERROR(record.status());
        found = *std::move(record);
      }
    }
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
  return Write(
      [&](sql::Database& db) { return DeleteOutboxRows(db, ids); });
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
    for (const ScannedRow& row : batch) {
      if (const BadRow* bad = std::get_if<BadRow>(&row)) {
        if (!bad_row) return BadRowStatus(options_.path, *bad);
        if (!bad_row(*bad)) return absl::OkStatus();
      } else if (!visit(std::get<Record>(row))) {
        return absl::OkStatus();
      }
      --remaining;
    }
    if (exhausted) break;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> SqliteStore::ExplainScan(
    const RecordFilter& filter) {
  RETURN_IF_ERROR(filter.Validate());
  std::vector<ScanValue> values;
  const std::string sql = filter.KeyHash() ? std::string(kScanRecordsByHash)
                                           : ScanSql(filter, &values);
  std::vector<std::string> steps;
  RETURN_IF_ERROR(Read([&](sql::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(sql::Statement plan,
                     db.GetUniqueStatement("EXPLAIN QUERY PLAN " + sql));
    while (true) {
      ASSIGN_OR_RETURN(bool row, plan.Step());
      if (!row) return absl::OkStatus();
      steps.push_back(plan.ColumnText(3));
    }
  }));
  return absl::StrJoin(steps, "; ");
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
    // A row that cannot be read cannot be matched and is left alone (see
    // QuarantineBadRows).
    std::vector<ScannedRow> matches;
    int64_t cursor = 0;
    bool exhausted = false;
    RETURN_IF_ERROR(ScanRecords(db, filter, std::numeric_limits<size_t>::max(),
                                /*with_results=*/false, &cursor, &matches,
                                &exhausted));
    ASSIGN_OR_RETURN(sql::Statement erase,
                     db.GetCachedStatement(kDeleteRecord));
    for (const ScannedRow& row : matches) {
      const Record* record = std::get_if<Record>(&row);
      if (record == nullptr) continue;
      erase.Reset();
      erase.BindInt64(1, record->id);
      RETURN_IF_ERROR(erase.Run());
      deleted += db.Changes();
    }
    return absl::OkStatus();
  }));
  return deleted;
}

absl::StatusOr<std::vector<BadRow>> SqliteStore::QuarantineBadRows() {
  std::vector<BadRow> moved;
  RETURN_IF_ERROR(Write([&](sql::Database& db) -> absl::Status {
    std::vector<ScannedRow> rows;
    int64_t cursor = 0;
    bool exhausted = false;
    RETURN_IF_ERROR(
        ScanRecords(db, RecordFilter(), std::numeric_limits<size_t>::max(),
                    /*with_results=*/true, &cursor, &rows, &exhausted));
    for (ScannedRow& row : rows) {
      if (BadRow* bad = std::get_if<BadRow>(&row)) moved.push_back(*bad);
    }
    if (moved.empty()) return absl::OkStatus();
    RETURN_IF_ERROR(CreateQuarantine(db));
    const int64_t now_us = absl::ToUnixMicros(absl::Now());
    for (const BadRow& bad : moved) {
      ASSIGN_OR_RETURN(sql::Statement keep,
                       db.GetCachedStatement(kQuarantineRecord));
      keep.BindInt64(1, bad.id);
      keep.BindInt64(2, now_us);
      keep.BindText(3, bad.reason);
      ASSIGN_OR_RETURN(bool row, keep.Step());
      if (!row) {
        return absl::InternalError(absl::StrCat(
            db.path(), ": quarantining record ", bad.id, " returned no id"));
      }
      const int64_t quarantine_id = keep.ColumnInt64(0);
      RETURN_IF_ERROR(keep.Run());
      ASSIGN_OR_RETURN(sql::Statement keep_results,
                       db.GetCachedStatement(kQuarantineResults));
      keep_results.BindInt64(1, bad.id);
      keep_results.BindInt64(2, quarantine_id);
      RETURN_IF_ERROR(keep_results.Run());
    }
    // A damaged value in an indexed column has index entries that do not
    // agree with it, and SQLite refuses to delete such a row
    // (SQLITE_CORRUPT_INDEX) unless writable_schema is on; the indexes are
    // then rebuilt from the rows that are left.
    RETURN_IF_ERROR(db.Execute("PRAGMA writable_schema = ON"));
    absl::Status erased = absl::OkStatus();
    for (const BadRow& bad : moved) {
      erased = db.Execute(
          absl::StrCat("DELETE FROM main.records WHERE id = ", bad.id));
      if (!erased.ok()) break;
    }
    RETURN_IF_ERROR(db.Execute("PRAGMA writable_schema = OFF"));
    RETURN_IF_ERROR(erased);
    return RebuildRecordIndexes(db);
  }));
  return moved;
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
  return TruncateWal();
}

const std::vector<std::string>& IndexedFilterFields() {
  static const auto* const kFields = [] {
    auto* fields = new std::vector<std::string>;
    for (const IndexedField& indexed : kIndexedFields) {
      fields->push_back(indexed.field);
    }
    return fields;
  }();
  return *kFields;
}

}  // namespace tunedb
