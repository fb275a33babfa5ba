// The tunedb database schema: its identity (PRAGMA application_id), its
// version (PRAGMA user_version), the DDL of the current version and the
// forward migrations from every older one.
//
// Version history:
//   1  records (no usage columns) and results; key_hash and key_text indexes.
//   2  records.served_count and records.last_served_us; an index on
//      records.measured_at_us for time-range queries.
//   3  records.timing_version; launch and host timings in results.
//   4  records.in_type and records.layout, and an index on each common
//      key-filter column (gpu_model, cudnn_version, op, in_type, layout).
//   5  results.knobs, numerical_notes, behavior_notes and plan: graph-API
//      engine configs.
//   6  fleet_outbox: search results waiting to be published to the fleet
//      database (docs/fleet.md).
//   7  records ids AUTOINCREMENT (never handed out twice, so a quarantined
//      or deleted record's id names no other record later); import_receipts.
//   8  results.build_ms and heuristic_rank: what a plan cost to build, and
//      where cuDNN's heuristic ranks the result.
//   9  records.revalidated_from: the cuDNN version a revalidation re-timed
//      the record's choices from (0: a full search).
//  10  records.revalidated_from_driver: the older driver a revalidation
//      re-timed the key's own record from ('': a full search).
//  11  program_keys: the Lookups each program made, for its next run's
//      one Warm call (docs/client.md).
//  12  record_shapes: an R*Tree of every record's family and shape, kept
//      with the record's writes, so a prediction reads the nearest shapes
//      of a family, not the family (record_shapes.h). The migration fills
//      it from each record's key text.
//  13  served_days: the answers served by UTC day, GPU model, cuDNN version
//      and program, with the time they saved, written by the served
//      counts' flush (store/served_days_sql.h). Starts empty.
//
// Thread safety: free functions on a Database the caller holds exclusively.
#ifndef TUNEDB_STORE_SQL_STORE_SCHEMA_H_
#define TUNEDB_STORE_SQL_STORE_SCHEMA_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/sql/database.h"

namespace tunedb {

// PRAGMA application_id of every tunedb database: "tund" in ASCII.
inline constexpr int32_t kStoreApplicationId = 0x74756e64;
// PRAGMA user_version this build writes and reads.
inline constexpr int kStoreSchemaVersion = 13;

// Reads the file's identity and returns its schema version, 0 for a new,
// empty database. FAILED_PRECONDITION (naming the file) if it belongs to
// another application, has a version newer than kStoreSchemaVersion, or is
// not a database at all.
absl::StatusOr<int> CheckStoreSchema(sql::Database& db);

// Creates the schema in an empty database or migrates an older one to
// kStoreSchemaVersion, in one BEGIN IMMEDIATE transaction (so two processes
// opening a new file at once do the work once). Requires a writable Database.
absl::Status CreateOrMigrateStoreSchema(sql::Database& db);

}  // namespace tunedb

#endif  // TUNEDB_STORE_SQL_STORE_SCHEMA_H_
