#include "store/record_scan.h"

#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/valid_key.h"
#include "common/version_text.h"
#include "store/record_columns.h"
#include "store/record_rows.h"
#include "store/sql/statement.h"

namespace tunedb {
namespace {

// A filter with a key hash is answered through the key-hash index.
constexpr const char kScanRecordsByHash[] =
    "SELECT " TUNEDB_RECORD_COLUMNS
    " FROM records INDEXED BY records_by_key_hash"
    " WHERE key_hash = ?3 AND key_version = ?1 AND id > ?2"
    " ORDER BY id";

// The start of a scan without a key hash (see FieldScanSql).
constexpr const char kScanRecordsFrom[] =
    "SELECT " TUNEDB_RECORD_COLUMNS
    " FROM records WHERE key_version = ?1 AND id > ?2";

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
  const absl::StatusOr<int> version = ParseCudnnVersion(text);
  if (!version.ok() || CudnnVersionText(*version) != text) return std::nullopt;
  return *version;
}

// The scan for a filter without a key hash: the indexed key fields it names
// and its time range become conditions (so SQLite reads through the index
// of a named field).
std::string FieldScanSql(const RecordFilter& filter,
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
  if (!filter.problem_text.empty()) {
    // The key text's problem part: from " op=" (after the device's fields,
    // whose values never hold a space) to the end.
    absl::StrAppend(&sql, " AND substr(key_text, instr(key_text, ' op=') + 1)"
                          " = ?", param);
    values->push_back({param++, std::nullopt, filter.problem_text});
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

void BindScan(sql::Statement& scan, int64_t cursor,
              const std::vector<ScanValue>& values) {
  scan.BindInt(1, kKeyFormatVersion);
  scan.BindInt64(2, cursor);
  for (const ScanValue& value : values) {
    if (value.integer) {
      scan.BindInt64(value.param, *value.integer);
    } else if (value.text) {
      scan.BindText(value.param, *value.text);
    } else {
      scan.BindNull(value.param);
    }
  }
}

// Appends the row `scan` stands on to `out`, as a record or a BadRow; false
// (nothing appended) for a record that `filter` rejects.
absl::StatusOr<bool> ReadScannedRow(sql::Database& db,
                                    const sql::Statement& scan,
                                    const RecordFilter& filter,
                                    bool with_results,
                                    std::vector<ScannedRow>* out) {
  Record record;
  record.id = scan.ColumnInt64(0);
  absl::StatusOr<ProblemKey> key = ReadRecordKey(scan);
  absl::Status read = key.status();
  if (key.ok()) {
    record.key = *std::move(key);
    read = ReadRecordFields(scan, record);
    // A record the filter rejects is skipped even if its results are bad.
    if (read.ok() && !filter.Matches(record)) return false;
    if (read.ok() && with_results) {
      read = LoadResults(db, record, !filter.without_plans);
    }
  }
  if (absl::IsDataLoss(read)) {
    out->push_back(MakeBadRow(scan, read));
  } else {
    RETURN_IF_ERROR(read);
    out->push_back(std::move(record));
  }
  return true;
}

}  // namespace

std::string ScanSql(const RecordFilter& filter,
                    std::vector<ScanValue>* values) {
  const std::optional<uint64_t> hash = filter.KeyHash();
  if (!hash) return FieldScanSql(filter, values);
  // The rest of the filter (other fields, time range) is checked by
  // Matches() after the read.
  values->push_back({3, static_cast<int64_t>(*hash), std::nullopt});
  return kScanRecordsByHash;
}

absl::Status ScanRecords(sql::Database& db, const RecordFilter& filter,
                         size_t want, bool with_results, int64_t* cursor,
                         std::vector<ScannedRow>* out, bool* exhausted) {
  std::vector<ScanValue> values;
  // One cached statement per combination of named fields: a few dozen.
  const std::string sql = ScanSql(filter, &values);
  ASSIGN_OR_RETURN(sql::Statement scan, db.GetCachedStatement(sql));
  BindScan(scan, *cursor, values);
  *exhausted = false;
  size_t found = 0;
  while (found < want) {
    ASSIGN_OR_RETURN(bool row, scan.Step());
    if (!row) {
      *exhausted = true;
      break;
    }
    *cursor = scan.ColumnInt64(0);
    ASSIGN_OR_RETURN(bool kept,
                     ReadScannedRow(db, scan, filter, with_results, out));
    if (kept) ++found;
  }
  return absl::OkStatus();
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
