// The fleet outbox's SQL on a SQLite store connection: the table of search
// results still to be published to the fleet database (schema version 6,
// store/sql/store_schema.h). SqliteStore calls these inside its own
// transactions; each row holds the record as its export-format line
// (store/record_json.h), so the outbox needs no columns of its own when
// records gain fields.
//
// Thread safety: free functions on a Database the caller holds exclusively.
#ifndef TUNEDB_STORE_OUTBOX_SQL_H_
#define TUNEDB_STORE_OUTBOX_SQL_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "store/sql/database.h"
#include "store/store.h"
#include "tunedb/record.h"

namespace tunedb {

// Adds `record` to the outbox (in the caller's transaction).
absl::Status AppendToOutbox(sql::Database& db, const Record& record);

// The oldest `limit` entries. A row that no longer parses (a damaged file)
// is logged by its id in `unreadable` and skipped, so it cannot stall the
// outbox.
absl::StatusOr<std::vector<OutboxEntry>> ReadOutboxRows(
    sql::Database& db, int limit, std::vector<int64_t>* unreadable);

// Deletes the entries with these ids.
absl::Status DeleteOutboxRows(sql::Database& db,
                              const std::vector<int64_t>& ids);

// Entries waiting.
absl::StatusOr<int64_t> CountOutboxRows(sql::Database& db);

}  // namespace tunedb

#endif  // TUNEDB_STORE_OUTBOX_SQL_H_
