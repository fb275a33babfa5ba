// Repair and quarantine: what the store does about rows it cannot read and
// indexes that disagree with their rows. QuarantineRows moves unreadable
// record rows, their values untouched, into quarantined_records and
// quarantined_results (tables made on first use, outside the versioned
// schema); RebuildRecordIndexes rebuilds the indexes of records and
// results from the rows.
//
// Internal to tunedb_store. Thread safety: free functions on a Database the
// caller holds exclusively, inside the caller's write transaction.
#ifndef TUNEDB_STORE_REPAIR_H_
#define TUNEDB_STORE_REPAIR_H_

#include <vector>

#include "absl/status/status.h"
#include "store/sql/database.h"
#include "store/store.h"

namespace tunedb {

// Copies each of `bad`'s record rows (found by id) and their results into
// the quarantine tables with its reason, then deletes the rows and rebuilds
// the indexes.
absl::Status QuarantineRows(sql::Database& db, const std::vector<BadRow>& bad);

// True for the error of a write that met an index entry disagreeing with
// its table row (SQLITE_CORRUPT_INDEX): quick_check does not compare the
// two, so a byte flipped in an indexed column of a stored row shows only
// when that row's index entries are changed.
bool IsIndexCorruption(const absl::Status& status);

// Rebuilds the indexes of records and results from their rows: afterwards
// every index entry agrees with its row.
absl::Status RebuildRecordIndexes(sql::Database& db);

}  // namespace tunedb

#endif  // TUNEDB_STORE_REPAIR_H_
