// Scans of the records table for a RecordFilter: the SELECT a filter runs
// (through the key-hash index for a filter with a key hash, through the
// index of each key field it names otherwise, see IndexedFilterFields) and
// the batched read of matching rows in id order.
//
// Internal to tunedb_store. Thread safety: free functions on a Database the
// caller holds exclusively.
#ifndef TUNEDB_STORE_RECORD_SCAN_H_
#define TUNEDB_STORE_RECORD_SCAN_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "store/sql/database.h"
#include "store/store.h"
#include "tunedb/record.h"

namespace tunedb {

// A value bound to a scan's parameter `param`: an integer, a text, or
// neither (NULL: a cuDNN version that no key spells so, which matches
// nothing).
struct ScanValue {
  int param = 0;
  std::optional<int64_t> integer;
  std::optional<std::string> text;
};

// The SELECT a scan for `filter` runs: ?1 is the key-format version, ?2 the
// cursor (rows with a larger id), and the parameters from ?3 on, whose
// values go to `values`, select by the key hash or by the indexed key
// fields and time range the filter names. RecordFilter::Matches checks
// every field afterwards anyway.
std::string ScanSql(const RecordFilter& filter, std::vector<ScanValue>* values);

// One row a scan read: a record, or a row that cannot be read.
using ScannedRow = std::variant<Record, BadRow>;

// Reads matching rows with id > *cursor, in id order, until `want` are found
// or the table ends (*exhausted). Advances *cursor past every row read.
// Results are loaded only `with_results`. A row that cannot be read is
// returned as a BadRow (see Store::Query for which ones). Runs in the
// caller's transaction.
absl::Status ScanRecords(sql::Database& db, const RecordFilter& filter,
                         size_t want, bool with_results, int64_t* cursor,
                         std::vector<ScannedRow>* out, bool* exhausted);

}  // namespace tunedb

#endif  // TUNEDB_STORE_RECORD_SCAN_H_
