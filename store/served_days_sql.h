// The answers served by UTC day (table served_days, schema version 13,
// store/sql/store_schema.h): one row per day, GPU model, cuDNN version and
// program ('' for a Lookup that named none), with the answers served and
// the search time they saved (each answer's record's search_ms when it was
// served). Written by the served counts' flush, in the transaction that
// adds to records.served_count; rows older than kServedDaysKept days are
// dropped by the same flush, so the table stays small (days x devices x
// programs). Read by the daemon's report.
//
// Thread safety: free functions on a Database the caller holds exclusively.
#ifndef TUNEDB_STORE_SERVED_DAYS_SQL_H_
#define TUNEDB_STORE_SERVED_DAYS_SQL_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "common/report_data.h"
#include "store/sql/database.h"
#include "store/store.h"

namespace tunedb {

// Days of served_days a flush keeps: the flush's day and the 400 before it.
inline constexpr int64_t kServedDaysKept = 400;

// The UTC day (days since the epoch) of a time in microseconds.
int64_t UtcDayOfMicros(int64_t unix_us);

// Adds each count of a known record id to its row of `day` (in the
// caller's transaction: the flush's, which adds to served_count too), an
// unknown id is left out; then drops the rows older than kServedDaysKept
// days before `day`.
absl::Status AddServedDayRows(sql::Database& db,
                              const std::vector<ServedCount>& counts,
                              int64_t day);

// The rows from `since_day` on, summed over GPU models and cuDNN versions:
// one per day and program, in day then program order.
absl::StatusOr<std::vector<ServedDayProgram>> ReadServedDayRows(
    sql::Database& db, int64_t since_day);

}  // namespace tunedb

#endif  // TUNEDB_STORE_SERVED_DAYS_SQL_H_
