// Reading and writing one record with its results, in the caller's
// transaction: every value read is checked (storage class, range, UTF-8,
// enum names, the key text against its hash and key columns), so a damaged
// row is DATA_LOSS saying what is wrong, never a wrong record.
//
// Internal to tunedb_store. Thread safety: free functions on a Database the
// caller holds exclusively.
#ifndef TUNEDB_STORE_RECORD_ROWS_H_
#define TUNEDB_STORE_RECORD_ROWS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/sql/database.h"
#include "store/sql/statement.h"
#include "store/store.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

// The key of a record row (TUNEDB_RECORD_COLUMNS): the key text must parse
// and agree with the columns stored beside it (key hash, and the indexed
// key fields: GPU model, op, cuDNN version, input type, layout), since
// scans select rows by those columns.
absl::StatusOr<ProblemKey> ReadRecordKey(const sql::Statement& row);

// The rest of a record row whose key was read, without its results.
absl::Status ReadRecordFields(const sql::Statement& row, Record& record);

// Replaces record.results with the stored results of record.id; without
// `with_plans`, their plans are left empty (RecordFilter::without_plans).
absl::Status LoadResults(sql::Database& db, Record& record,
                         bool with_plans = true);

// The current-version record of `key`, or nullopt; DATA_LOSS naming the
// path and row id if its row cannot be read.
absl::StatusOr<std::optional<Record>> GetRecord(sql::Database& db,
                                                const ProblemKey& key);

// The BadRow for a row (TUNEDB_RECORD_COLUMNS) that could not be read.
BadRow MakeBadRow(const sql::Statement& row, const absl::Status& status);

// DATA_LOSS naming `path` and the bad row.
absl::Status BadRowStatus(const std::string& path, const BadRow& bad);

// Binds the TUNEDB_RECORD_WRITE_COLUMNS of `record` to parameters
// first .. first + kRecordWriteColumns - 1.
void BindRecord(sql::Statement& statement, int first, const Record& record,
                const std::string& key_text);

// Writes `record`'s results under `id` (a record id, or a stage_id) with
// `insert`, a statement whose parameter 1 is that id and whose parameters
// from 2 on are the TUNEDB_RESULT_WRITE_COLUMNS.
absl::Status InsertResults(sql::Statement& insert, int64_t id,
                           const Record& record);

// Inserts or replaces the row of record.key (keeping its id), its results
// and its row of the shape index (record_shapes.h); returns the row id.
absl::StatusOr<int64_t> PutRecord(sql::Database& db, const Record& record);

}  // namespace tunedb

#endif  // TUNEDB_STORE_RECORD_ROWS_H_
