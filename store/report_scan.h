// The store's read made for the report (Store::ReportWalk): the record
// rows and the columns of their results that the report's figures use
// (common/report_data.h), read by two scans side by side in id order (a
// merge join), a batch of records per read transaction. The key text is checked against its stored hash and
// only its device part is parsed (the GPU model and cuDNN version, checked
// against their columns); the problem part goes to the aggregator as text.
// A row whose read parts are damaged is a BadRow with the reason Query
// gives for the same damage.
//
// The walk splits the ids into ranges, one a read connection, each read on
// its own thread (Store::ReportWalk's parts).
//
// Internal to tunedb_store. Thread safety: free functions on a Database
// the caller holds exclusively.
#ifndef TUNEDB_STORE_REPORT_SCAN_H_
#define TUNEDB_STORE_REPORT_SCAN_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "common/report_data.h"
#include "store/sql/database.h"
#include "store/store.h"

namespace tunedb {

// Reads up to `want` current-version records with *cursor < id <= up_to,
// in id order, handing each to `visit` (or, unreadable, to `bad_row`);
// advances *cursor past them. *exhausted once the range ends; *stopped once
// a callback returned false. Runs in the caller's transaction.
absl::Status ScanReportRecords(
    sql::Database& db, size_t want, int64_t up_to,
    const std::function<bool(const ReportRecord&)>& visit,
    const std::function<bool(const BadRow&)>& bad_row, int64_t* cursor,
    bool* exhausted, bool* stopped);

// The id ranges (after, up_to] of a walk split `parts` ways over the ids
// from `min_id` to `max_id` (consecutive, in id order; the last one open
// above, for records added meanwhile). One range when the table is empty
// (min_id > max_id).
std::vector<std::pair<int64_t, int64_t>> ReportRanges(int64_t min_id,
                                                      int64_t max_id,
                                                      int parts);

}  // namespace tunedb

#endif  // TUNEDB_STORE_REPORT_SCAN_H_
