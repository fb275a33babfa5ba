// The Lookups programs made, on a SQLite store connection (table
// program_keys, schema version 11, store/sql/store_schema.h): one row per
// program, device key text and request (opaque bytes here), with when it was
// last asked. The daemon writes them in batches and answers a program's next
// run from them in one Warm call (docs/program-keys.md); the bounds on how
// many it keeps are the caller's, applied through these functions.
//
// Thread safety: free functions on a Database the caller holds exclusively.
#ifndef TUNEDB_STORE_PROGRAM_KEYS_SQL_H_
#define TUNEDB_STORE_PROGRAM_KEYS_SQL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "store/sql/database.h"
#include "store/store.h"

namespace tunedb {

// Keeps each row (in the caller's transaction); a row kept already takes
// the later of its two last_asked_us. Then forgets each written program's
// rows past its newest `max_keys_per_program` (ties broken by device and
// request) and returns the written programs' totals.
absl::StatusOr<std::vector<ProgramTotals>> WriteProgramKeyRows(
    sql::Database& db, const std::vector<ProgramKey>& rows,
    int64_t max_keys_per_program);

// The rows of `program` on `device`, the most recently asked first, at most
// `limit` (<= 0: all).
absl::StatusOr<std::vector<ProgramKey>> ReadProgramKeyRows(
    sql::Database& db, const std::string& program, const std::string& device,
    int64_t limit);

// Every program's totals.
absl::StatusOr<std::vector<ProgramTotals>> ReadProgramTotals(
    sql::Database& db);

// Deletes every row of `programs` (in the caller's transaction).
absl::Status DeleteProgramKeyRows(sql::Database& db,
                                  const std::vector<std::string>& programs);

}  // namespace tunedb

#endif  // TUNEDB_STORE_PROGRAM_KEYS_SQL_H_
