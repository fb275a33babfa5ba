#include "store/record_rows.h"

#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/record_results.h"
#include "common/status_macros.h"
#include "common/valid_key.h"
#include "store/record_columns.h"
#include "store/record_json.h"
#include "store/sql/record_shapes.h"

namespace tunedb {
namespace {

constexpr const char kInsertSuperseded[] =
    "INSERT INTO superseded_records(key_text, driver_version, "
    "superseded_at_us, record_json) VALUES (?, ?, ?, ?)";
constexpr const char kGetRecord[] =
    "SELECT " TUNEDB_RECORD_COLUMNS
    " FROM records INDEXED BY records_by_key_hash"
    " WHERE key_hash = ?1 AND key_text = ?2 AND key_version = ?3";
// The stored driver of a key, for KeepSuperseded: one indexed column.
constexpr const char kGetDriver[] =
    "SELECT driver_version FROM records INDEXED BY records_by_key_hash"
    " WHERE key_hash = ?1 AND key_text = ?2 AND key_version = ?3";

// A record's result rows, in rank order, with `plan` as their plan column.
#define TUNEDB_GET_RESULTS(plan)                                            \
  "SELECT algo, math_type, status, workspace_bytes, deterministic, retimed," \
  " error, launch_median_ms, launch_spread_ms, launch_samples,"             \
  " gpu_median_ms, gpu_spread_ms, gpu_samples,"                             \
  " host_median_ms, host_spread_ms, host_samples,"                          \
  " knobs, numerical_notes, behavior_notes, " plan ", build_ms,"            \
  " heuristic_rank FROM results WHERE record_id = ?1 ORDER BY rank"
constexpr const char kGetResults[] = TUNEDB_GET_RESULTS("plan");
constexpr const char kGetResultsWithoutPlans[] =
    TUNEDB_GET_RESULTS("'' AS plan");
#undef TUNEDB_GET_RESULTS

constexpr const char kUpsertRecord[] =
    "INSERT INTO records(" TUNEDB_RECORD_WRITE_COLUMNS
    ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
    " ?15, ?16, ?17, ?18, ?19, ?20, ?21)" TUNEDB_RECORD_UPSERT
    " RETURNING id";

constexpr const char kDeleteResults[] =
    "DELETE FROM results WHERE record_id = ?1";

constexpr const char kInsertResult[] =
    "INSERT INTO results(record_id, " TUNEDB_RESULT_WRITE_COLUMNS
    ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
    " ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24)";

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
// and range. The first problem is kept, naming the column as "<name>", or
// "results[<result>].<name>" for a result row, and the value read is then a
// default. (Nothing is allocated for a sound row: a query reads millions.)
class RowReader {
 public:
  explicit RowReader(const sql::Statement& row, int result = -1)
      : row_(row), result_(result) {}

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
    if (!problem_.empty()) return;
    problem_ = result_ < 0 ? absl::StrCat(name, " ", problem)
                           : absl::StrCat("results[", result_, "].", name,
                                          " ", problem);
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
  const int result_;
  std::string problem_;
};

// One result row (a row of kGetResults), read through `reader`.
AlgoResult ReadResult(RowReader& reader) {
  AlgoResult result;
  result.algo = static_cast<int>(reader.Count(0, "algo"));
  result.math_type = reader.Name(1, "math_type", &ParseMathType);
  result.status = reader.Name(2, "status", &ParseAlgoStatus);
  result.workspace_bytes = reader.Count(3, "workspace_bytes");
  result.deterministic = reader.Bool(4, "deterministic");
  result.retimed = reader.Bool(5, "retimed");
  result.error = reader.Text(6, "error");
  struct TimingColumns {
    Timing* timing;
    const char* median;
    const char* spread;
    const char* samples;
  };
  int column = 7;
  for (const TimingColumns& t :
       {TimingColumns{&result.launch, "launch_median_ms", "launch_spread_ms",
                      "launch_samples"},
        TimingColumns{&result.gpu, "gpu_median_ms", "gpu_spread_ms",
                      "gpu_samples"},
        TimingColumns{&result.host, "host_median_ms", "host_spread_ms",
                      "host_samples"}}) {
    t.timing->median_ms = reader.Time(column++, t.median);
    t.timing->spread_ms = reader.Time(column++, t.spread);
    t.timing->samples = static_cast<int>(reader.Count(column++, t.samples));
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
  result.build_ms = reader.Time(column++, "build_ms");
  result.heuristic_rank =
      static_cast<int>(reader.Count(column++, "heuristic_rank"));
  return result;
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
  statement.BindDouble(param++, result.build_ms);
  statement.BindInt(param++, result.heuristic_rank);
}

}  // namespace

absl::StatusOr<ProblemKey> ReadRecordKey(const sql::Statement& row) {
  RowReader reader(row);
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

absl::Status ReadRecordFields(const sql::Statement& row, Record& record) {
  RowReader reader(row);
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
  record.revalidated_from_cudnn =
      static_cast<int>(reader.Count(19, "revalidated_from"));
  if (!CheckRevalidatedFrom(record).ok()) {
    reader.Fail("revalidated_from", "is the key's own cuDNN version");
  }
  record.revalidated_from_driver = reader.Text(20, "revalidated_from_driver");
  if (!CheckRevalidatedFromDriver(record).ok()) {
    reader.Fail("revalidated_from_driver",
                "is not an older driver than driver_version");
  }
  if (!reader.problem().empty()) return absl::DataLossError(reader.problem());
  return absl::OkStatus();
}

absl::Status LoadResults(sql::Database& db, Record& record,
                         bool with_plans) {
  ASSIGN_OR_RETURN(sql::Statement statement,
                   db.GetCachedStatement(with_plans ? kGetResults
                                                    : kGetResultsWithoutPlans));
  statement.BindInt64(1, record.id);
  record.results.clear();
  while (true) {
    ASSIGN_OR_RETURN(bool row, statement.Step());
    if (!row) return absl::OkStatus();
    RowReader reader(statement, static_cast<int>(record.results.size()));
    AlgoResult result = ReadResult(reader);
    if (!reader.problem().empty()) return absl::DataLossError(reader.problem());
    record.results.push_back(std::move(result));
  }
}

absl::StatusOr<std::optional<Record>> GetRecord(sql::Database& db,
                                                const ProblemKey& key) {
  ASSIGN_OR_RETURN(sql::Statement get, db.GetCachedStatement(kGetRecord));
  const std::string key_text = key.ToText();
  get.BindInt64(1, static_cast<int64_t>(KeyTextHash(key_text)));
  get.BindText(2, key_text);
  get.BindInt(3, kKeyFormatVersion);
  ASSIGN_OR_RETURN(bool row, get.Step());
  if (!row) return std::nullopt;
  absl::StatusOr<Record> record = ReadRecord(db, get);
  if (absl::IsDataLoss(record.status())) {
    return BadRowStatus(db.path(), MakeBadRow(get, record.status()));
  }
  RETURN_IF_ERROR(record.status());
  return *std::move(record);
}

BadRow MakeBadRow(const sql::Statement& row, const absl::Status& status) {
  return BadRow{row.ColumnInt64(0), absl::CHexEscape(row.ColumnText(1)),
                std::string(status.message())};
}

absl::Status BadRowStatus(const std::string& path, const BadRow& bad) {
  return absl::DataLossError(
      absl::StrCat(path, ": record ", bad.id, " cannot be read: ", bad.reason));
}

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
  statement.BindInt(param++, record.revalidated_from_cudnn);
  statement.BindText(param++, record.revalidated_from_driver);
}

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

// Before `record` replaces the stored record of its key: where that one was
// measured under another driver, it is kept whole, as its export-format line
// (superseded_records), in the same transaction. A row that cannot be read is
// replaced as before (nothing readable to keep).
absl::Status KeepSuperseded(sql::Database& db, const Record& record,
                            const std::string& key_text) {
  {
    // Most Puts replace a record of the same driver (or none): one column
    // says so, without reading the results and plans.
    ASSIGN_OR_RETURN(sql::Statement driver,
                     db.GetCachedStatement(kGetDriver));
    driver.BindInt64(1, static_cast<int64_t>(KeyTextHash(key_text)));
    driver.BindText(2, key_text);
    driver.BindInt(3, kKeyFormatVersion);
    ASSIGN_OR_RETURN(bool row, driver.Step());
    if (!row || driver.ColumnText(0) == record.driver_version) {
      return absl::OkStatus();
    }
  }
  absl::StatusOr<std::optional<Record>> old = GetRecord(db, record.key);
  if (absl::IsDataLoss(old.status())) return absl::OkStatus();
  RETURN_IF_ERROR(old.status());
  if (!old->has_value() ||
      (*old)->driver_version == record.driver_version) {
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(sql::Statement keep,
                   db.GetCachedStatement(kInsertSuperseded));
  keep.BindText(1, key_text);
  keep.BindText(2, (*old)->driver_version);
  keep.BindInt64(3, absl::ToUnixMicros(absl::Now()));
  keep.BindText(4, RecordToJson(**old));
  return keep.Run();
}

absl::StatusOr<int64_t> PutRecord(sql::Database& db, const Record& record) {
  RETURN_IF_ERROR(record.key.Validate());
  const std::string key_text = record.key.ToText();
  RETURN_IF_ERROR(KeepSuperseded(db, record, key_text));
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
  RETURN_IF_ERROR(PutRecordShape(db, id, record.key));
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

}  // namespace tunedb
