#include "store/sql/store_schema.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "store/sql/record_shapes.h"
#include "store/sql/transaction.h"

namespace tunedb {
namespace {

// The records table as of version 7 (ids AUTOINCREMENT) and its indexes:
// what kCreateSchema makes, and what the 6 -> 7 rebuild makes.
#define TUNEDB_RECORDS_COLUMNS \
  "(\n" \
  "  id INTEGER PRIMARY KEY AUTOINCREMENT,\n" \
  "  key_version INTEGER NOT NULL,\n" \
  "  key_hash INTEGER NOT NULL,\n" \
  "  key_text TEXT NOT NULL UNIQUE,\n" \
  "  gpu_model TEXT NOT NULL,\n" \
  "  cudnn_version INTEGER NOT NULL,\n" \
  "  op TEXT NOT NULL,\n" \
  "  in_type TEXT NOT NULL DEFAULT '',\n" \
  "  layout TEXT NOT NULL DEFAULT '',\n" \
  "  measured_at_us INTEGER NOT NULL,\n" \
  "  host TEXT NOT NULL,\n" \
  "  gpu_uuid TEXT NOT NULL,\n" \
  "  driver_version TEXT NOT NULL,\n" \
  "  finder TEXT NOT NULL,\n" \
  "  repeats INTEGER NOT NULL,\n" \
  "  workspace_cap_bytes INTEGER NOT NULL,\n" \
  "  search_ms REAL NOT NULL,\n" \
  "  verified INTEGER NOT NULL,\n" \
  "  served_count INTEGER NOT NULL DEFAULT 0,\n" \
  "  last_served_us INTEGER NOT NULL DEFAULT 0,\n" \
  "  timing_version INTEGER NOT NULL DEFAULT 1);\n"
#define TUNEDB_RECORDS_INDEXES \
  "\n" \
  "CREATE INDEX records_by_key_hash ON records(key_hash);\n" \
  "CREATE INDEX records_by_measured_at ON records(measured_at_us);\n" \
  "CREATE INDEX records_by_gpu_model ON records(gpu_model);\n" \
  "CREATE INDEX records_by_cudnn_version ON records(cudnn_version);\n" \
  "CREATE INDEX records_by_op ON records(op);\n" \
  "CREATE INDEX records_by_in_type ON records(in_type);\n" \
  "CREATE INDEX records_by_layout ON records(layout);\n"

// Version 9: where a record came from (Record::revalidated_from_cudnn).
#define TUNEDB_RECORDS_PROVENANCE \
  "ALTER TABLE records ADD COLUMN revalidated_from INTEGER NOT NULL " \
  "DEFAULT 0;\n"

// Version 10: where a record came from after a driver upgrade
// (Record::revalidated_from_driver).
#define TUNEDB_RECORDS_DRIVER_PROVENANCE \
  "ALTER TABLE records ADD COLUMN revalidated_from_driver TEXT NOT NULL " \
  "DEFAULT '';\n"

// Version 10 too: records replaced by one measured under another driver,
// each kept whole as its export-format line (a driver upgrade's re-timing
// replaces the old driver's record of a key; this keeps it).
#define TUNEDB_SUPERSEDED_SCHEMA                    \
  "CREATE TABLE IF NOT EXISTS superseded_records("  \
  "  id INTEGER PRIMARY KEY,"                       \
  "  key_text TEXT NOT NULL,"                       \
  "  driver_version TEXT NOT NULL,"                 \
  "  superseded_at_us INTEGER NOT NULL,"            \
  "  record_json TEXT NOT NULL);\n"
constexpr const char* kSupersededSchema = TUNEDB_SUPERSEDED_SCHEMA;

// The current schema, created in one go for a new database.
constexpr const char* kCreateSchema = "CREATE TABLE records"
    TUNEDB_RECORDS_COLUMNS TUNEDB_RECORDS_INDEXES TUNEDB_RECORDS_PROVENANCE
    TUNEDB_RECORDS_DRIVER_PROVENANCE
    R"sql(
CREATE TABLE results(
  record_id INTEGER NOT NULL REFERENCES records(id) ON DELETE CASCADE,
  rank INTEGER NOT NULL,
  algo INTEGER NOT NULL,
  math_type TEXT NOT NULL,
  status TEXT NOT NULL,
  gpu_median_ms REAL NOT NULL,
  gpu_spread_ms REAL NOT NULL,
  gpu_samples INTEGER NOT NULL,
  workspace_bytes INTEGER NOT NULL,
  deterministic INTEGER NOT NULL,
  retimed INTEGER NOT NULL,
  error TEXT NOT NULL,
  launch_median_ms REAL NOT NULL DEFAULT 0,
  launch_spread_ms REAL NOT NULL DEFAULT 0,
  launch_samples INTEGER NOT NULL DEFAULT 0,
  host_median_ms REAL NOT NULL DEFAULT 0,
  host_spread_ms REAL NOT NULL DEFAULT 0,
  host_samples INTEGER NOT NULL DEFAULT 0,
  knobs TEXT NOT NULL DEFAULT '',
  numerical_notes INTEGER NOT NULL DEFAULT 0,
  behavior_notes INTEGER NOT NULL DEFAULT 0,
  plan TEXT NOT NULL DEFAULT '',
  build_ms REAL NOT NULL DEFAULT 0,
  heuristic_rank INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(record_id, rank)) WITHOUT ROWID;
)sql";

// The fleet outbox (version 6): each search result a daemon with a fleet
// database stored, as its export-format line, until it is published
// (written in the record's own transaction, see Store::PutForFleet). Kept
// apart from kCreateSchema so that new and migrated files run the same DDL.
constexpr const char* kFleetOutboxSchema = R"sql(
CREATE TABLE fleet_outbox(
  id INTEGER PRIMARY KEY,
  key_text TEXT NOT NULL,
  record_json TEXT NOT NULL,
  enqueued_us INTEGER NOT NULL);
)sql";

// The receipts of committed imports (version 7): the id a client gave its
// import, written in the import's own transaction, so that a client whose
// stream broke can ask afterwards whether its import committed
// (ImportStatus).
#define TUNEDB_IMPORT_RECEIPTS_SCHEMA                 \
  "CREATE TABLE IF NOT EXISTS import_receipts("       \
  "  import_id TEXT PRIMARY KEY,"                     \
  "  imported INTEGER NOT NULL,"                      \
  "  lines INTEGER NOT NULL,"                         \
  "  committed_at_us INTEGER NOT NULL) WITHOUT ROWID;"
constexpr const char* kImportReceiptsSchema = TUNEDB_IMPORT_RECEIPTS_SCHEMA;

// The Lookups each program made (version 11), by the program's name and
// the device key's text; `request` is the Lookup as the service wrote it
// (opaque here). A program's next run is answered all of them in one Warm.
constexpr const char* kProgramKeysSchema = R"sql(
CREATE TABLE IF NOT EXISTS program_keys(
  program TEXT NOT NULL,
  device TEXT NOT NULL,
  request BLOB NOT NULL,
  last_asked_us INTEGER NOT NULL,
  PRIMARY KEY(program, device, request)) WITHOUT ROWID;
)sql";

// The answers served by UTC day, GPU model, cuDNN version and program
// ('' for none) with the time they saved (version 13), added to by the
// served counts' flush (store/served_days_sql.h).
constexpr const char* kServedDaysSchema = R"sql(
CREATE TABLE IF NOT EXISTS served_days(
  day INTEGER NOT NULL,
  gpu_model TEXT NOT NULL,
  cudnn_version INTEGER NOT NULL,
  program TEXT NOT NULL,
  served INTEGER NOT NULL,
  saved_ms REAL NOT NULL,
  PRIMARY KEY(day, gpu_model, cudnn_version, program)) WITHOUT ROWID;
)sql";

// kMigrations[v] takes a database from version v to v + 1 (index 0 unused).
constexpr const char* kMigrations[] = {
    nullptr,
    // 1 -> 2: usage counters and the time index.
    R"sql(
ALTER TABLE records ADD COLUMN served_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE records ADD COLUMN last_served_us INTEGER NOT NULL DEFAULT 0;
CREATE INDEX records_by_measured_at ON records(measured_at_us);
)sql",
    // 2 -> 3: launch-inclusive timing. The one time stored so far was GPU
    // time (CUDA-graph replays); launch and host time start unmeasured, and
    // the old records are marked stale (timing_version 1: re-searched by
    // the next Tune).
    R"sql(
ALTER TABLE records ADD COLUMN timing_version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE results RENAME COLUMN median_ms TO gpu_median_ms;
ALTER TABLE results RENAME COLUMN spread_ms TO gpu_spread_ms;
ALTER TABLE results RENAME COLUMN samples TO gpu_samples;
ALTER TABLE results ADD COLUMN launch_median_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN launch_spread_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN launch_samples INTEGER NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN host_median_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN host_spread_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN host_samples INTEGER NOT NULL DEFAULT 0;
)sql",
    // 3 -> 4: indexes for the common key-field filters. in_type and layout
    // are filled from the canonical key text, where each field stands once
    // as " name=value" and type and layout names hold no space.
    R"sql(
ALTER TABLE records ADD COLUMN in_type TEXT NOT NULL DEFAULT '';
ALTER TABLE records ADD COLUMN layout TEXT NOT NULL DEFAULT '';
UPDATE records SET
  in_type = substr(key_text, instr(key_text, ' in_type=') + 9,
      instr(substr(key_text, instr(key_text, ' in_type=') + 9) || ' ', ' ')
      - 1),
  layout = substr(key_text, instr(key_text, ' layout=') + 8,
      instr(substr(key_text, instr(key_text, ' layout=') + 8) || ' ', ' ')
      - 1);
CREATE INDEX records_by_gpu_model ON records(gpu_model);
CREATE INDEX records_by_cudnn_version ON records(cudnn_version);
CREATE INDEX records_by_op ON records(op);
CREATE INDEX records_by_in_type ON records(in_type);
CREATE INDEX records_by_layout ON records(layout);
)sql",
    // 4 -> 5: graph-API engine configs. Legacy results keep the defaults.
    R"sql(
ALTER TABLE results ADD COLUMN knobs TEXT NOT NULL DEFAULT '';
ALTER TABLE results ADD COLUMN numerical_notes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN behavior_notes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN plan TEXT NOT NULL DEFAULT '';
)sql",
    // 5 -> 6: the fleet outbox.
    kFleetOutboxSchema,
    // 6 -> 7: record ids are never handed out twice (AUTOINCREMENT: a
    // record quarantined or deleted keeps its id to itself), and the
    // receipts of committed imports. The records table is rebuilt with the
    // columns in kCreateSchema's order; its indexes go with the old table
    // and are made again. Run with foreign keys off (see
    // CreateOrMigrateStoreSchema), so dropping the old table leaves results
    // alone.
    "CREATE TABLE records_v7" TUNEDB_RECORDS_COLUMNS R"sql(
INSERT INTO records_v7(
  id, key_version, key_hash, key_text, gpu_model, cudnn_version, op, in_type,
  layout, measured_at_us, host, gpu_uuid, driver_version, finder, repeats,
  workspace_cap_bytes, search_ms, verified, served_count, last_served_us,
  timing_version)
SELECT
  id, key_version, key_hash, key_text, gpu_model, cudnn_version, op, in_type,
  layout, measured_at_us, host, gpu_uuid, driver_version, finder, repeats,
  workspace_cap_bytes, search_ms, verified, served_count, last_served_us,
  timing_version
FROM records;
DROP TABLE records;
ALTER TABLE records_v7 RENAME TO records;
)sql" TUNEDB_RECORDS_INDEXES TUNEDB_IMPORT_RECEIPTS_SCHEMA,
    // 7 -> 8: a result's plan build time and its heuristic rank (unknown,
    // 0, for results stored before).
    R"sql(
ALTER TABLE results ADD COLUMN build_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN heuristic_rank INTEGER NOT NULL DEFAULT 0;
)sql",
    // 8 -> 9: where a record came from: 0 (a full search, as every record
    // stored before was) or the cuDNN version a revalidation re-timed.
    TUNEDB_RECORDS_PROVENANCE,
    // 9 -> 10: where a record came from after a driver upgrade: '' (a full
    // search, as every record stored before was) or the older driver whose
    // record of the key a revalidation re-timed; and the records such a
    // re-timing replaced.
    TUNEDB_RECORDS_DRIVER_PROVENANCE TUNEDB_SUPERSEDED_SCHEMA,
    // 10 -> 11: the Lookups each program made.
    kProgramKeysSchema,
    // 11 -> 12: the index of stored shapes; its rows are written by
    // FillRecordShapes after the SQL.
    kRecordShapesSchema,
    // 12 -> 13: the answers served by day and program (none counted yet).
    kServedDaysSchema,
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) ==
                  kStoreSchemaVersion,
              "one migration per schema version");

}  // namespace

absl::StatusOr<int> CheckStoreSchema(sql::Database& db) {
  // On a file that is not SQLite at all the first read fails with
  // SQLITE_NOTADB, which becomes FAILED_PRECONDITION naming the file.
  // One statement, so the three values come from one snapshot: read one by
  // one, another process creating the file in between could make a new
  // tunedb file look like another application's.
  ASSIGN_OR_RETURN(
      sql::Statement identity,
      db.GetUniqueStatement(
          "SELECT (SELECT application_id FROM pragma_application_id), "
          "(SELECT user_version FROM pragma_user_version), "
          "(SELECT COUNT(*) FROM sqlite_schema)"));
  ASSIGN_OR_RETURN(bool row, identity.Step());
  if (!row) return absl::InternalError("identity query returned no row");
  const int64_t application_id = identity.ColumnInt64(0);
  const int64_t version = identity.ColumnInt64(1);
  const int64_t objects = identity.ColumnInt64(2);
  if (application_id == 0 && version == 0 && objects == 0) return 0;
  if (application_id != kStoreApplicationId) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s is a SQLite database of another application, not a tunedb "
        "database (application_id 0x%08x, expected 0x%08x)",
        db.path(), static_cast<uint32_t>(application_id),
        static_cast<uint32_t>(kStoreApplicationId)));
  }
  if (version > kStoreSchemaVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat(db.path(), " has tunedb schema version ", version,
                     ", newer than the newest this build understands (",
                     kStoreSchemaVersion, "); use a newer tunedb"));
  }
  if (version < 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        db.path(),
        " is marked as a tunedb database but has no schema version"));
  }
  return static_cast<int>(version);
}

namespace {

// After the rebuild of version 7: ids of records quarantined before it are
// not handed out again either.
absl::Status RetireQuarantinedIds(sql::Database& db) {
  ASSIGN_OR_RETURN(sql::Statement exists,
                   db.GetUniqueStatement(
                       "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND "
                       "name = 'quarantined_records'"));
  ASSIGN_OR_RETURN(bool quarantine, exists.Step());
  if (!quarantine) return absl::OkStatus();
  return db.Execute(R"sql(
INSERT INTO sqlite_sequence(name, seq) SELECT 'records', 0
  WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'records');
UPDATE sqlite_sequence SET seq = max(seq,
    (SELECT coalesce(max(id), 0) FROM quarantined_records))
  WHERE name = 'records';
)sql");
}

absl::Status CreateOrMigrateInTransaction(sql::Database& db) {
  sql::Transaction transaction(&db, sql::Transaction::Kind::kImmediate);
  RETURN_IF_ERROR(transaction.Begin());
  // Checked again under the write lock: another process may have created or
  // migrated the file since the caller looked.
  ASSIGN_OR_RETURN(int version, CheckStoreSchema(db));
  if (version == kStoreSchemaVersion) return transaction.Commit();
  if (version == 0) {
    RETURN_IF_ERROR(db.Execute(kCreateSchema));
    RETURN_IF_ERROR(db.Execute(kFleetOutboxSchema));
    RETURN_IF_ERROR(db.Execute(kImportReceiptsSchema));
    RETURN_IF_ERROR(db.Execute(kSupersededSchema));
    RETURN_IF_ERROR(db.Execute(kProgramKeysSchema));
    RETURN_IF_ERROR(db.Execute(kRecordShapesSchema));
    RETURN_IF_ERROR(db.Execute(kServedDaysSchema));
  } else {
    for (int v = version; v < kStoreSchemaVersion; ++v) {
      RETURN_IF_ERROR(db.Execute(kMigrations[v]));
    }
    if (version < 7) RETURN_IF_ERROR(RetireQuarantinedIds(db));
    if (version < 12) RETURN_IF_ERROR(FillRecordShapes(db));
  }
  RETURN_IF_ERROR(db.Execute(
      absl::StrCat("PRAGMA application_id = ", kStoreApplicationId,
                   "; PRAGMA user_version = ", kStoreSchemaVersion)));
  return transaction.Commit();
}

}  // namespace

absl::Status CreateOrMigrateStoreSchema(sql::Database& db) {
  // A migration may rebuild a table that others reference (version 7):
  // foreign keys are off while it runs (the pragma is a no-op inside a
  // transaction), then as they were.
  ASSIGN_OR_RETURN(sql::Statement pragma,
                   db.GetUniqueStatement("PRAGMA foreign_keys"));
  ASSIGN_OR_RETURN(bool row, pragma.Step());
  const bool foreign_keys = row && pragma.ColumnInt64(0) != 0;
  if (foreign_keys) RETURN_IF_ERROR(db.Execute("PRAGMA foreign_keys = OFF"));
  absl::Status status = CreateOrMigrateInTransaction(db);
  if (foreign_keys) {
    absl::Status on = db.Execute("PRAGMA foreign_keys = ON");
    if (status.ok()) status = on;
  }
  return status;
}

}  // namespace tunedb
