#include "store/fleet/fleet_schema.h"

#include <algorithm>
#include <string>

namespace tunedb {
namespace {

// pg_advisory_xact_lock key of schema changes: "tund" in ASCII.
constexpr long kSchemaLock = 0x74756e64;

// Version 1, created in one go for a new database.
constexpr const char* kCreateSchema = R"sql(
CREATE TABLE tunedb_fleet_schema(version integer NOT NULL);
CREATE TABLE fleet_records(
  key_text text NOT NULL,
  host text NOT NULL,
  key_hash bigint NOT NULL,
  gpu_model text NOT NULL,
  cudnn_version integer NOT NULL,
  measured_at_us bigint NOT NULL,
  verified boolean NOT NULL,
  repeats integer NOT NULL,
  timing_version integer NOT NULL,
  published_at timestamptz NOT NULL DEFAULT now(),
  body text NOT NULL,
  PRIMARY KEY (key_text, host));
CREATE INDEX fleet_records_by_key_hash ON fleet_records(key_hash);
CREATE INDEX fleet_records_by_device ON fleet_records(gpu_model, cudnn_version);
CREATE INDEX fleet_records_by_host ON fleet_records(host);
CREATE INDEX fleet_records_by_measured_at ON fleet_records(measured_at_us);
CREATE TABLE fleet_leases(
  key_text text PRIMARY KEY,
  holder text NOT NULL,
  expires_at timestamptz NOT NULL);
CREATE TABLE fleet_jobs(
  id bigserial PRIMARY KEY,
  batch text NOT NULL,
  device_text text NOT NULL,
  key_text text NOT NULL,
  state text NOT NULL DEFAULT 'queued'
    CHECK (state IN ('queued', 'running', 'done', 'failed')),
  holder text NOT NULL DEFAULT '',
  lease_expires_at timestamptz,
  attempts integer NOT NULL DEFAULT 0,
  searched boolean NOT NULL DEFAULT false,
  error text NOT NULL DEFAULT '',
  enqueued_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  UNIQUE (batch, key_text));
CREATE INDEX fleet_jobs_ready ON fleet_jobs(device_text, state, id);
)sql";

// Migrations: kMigrations[v - 2] takes version v - 1 to v.
constexpr const char* kMigrations[] = {
    // 2: a job may be a revalidation from another cuDNN version (0: none).
    "ALTER TABLE fleet_jobs ADD COLUMN revalidate_from integer NOT NULL "
    "DEFAULT 0",
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) ==
              kFleetSchemaVersion - 1);

}  // namespace

int ReadFleetSchemaVersion(pqxx::work& txn) {
  pqxx::result table =
      txn.exec("SELECT to_regclass('tunedb_fleet_schema') IS NOT NULL");
  if (!table[0][0].as<bool>()) return 0;
  pqxx::result version =
      txn.exec("SELECT COALESCE(MAX(version), 0) FROM tunedb_fleet_schema");
  return version[0][0].as<int>();
}

int CreateOrMigrateFleetSchema(pqxx::work& txn) {
  txn.exec("SELECT pg_advisory_xact_lock(" + std::to_string(kSchemaLock) +
           ")");
  const int found = ReadFleetSchemaVersion(txn);
  if (found >= kFleetSchemaVersion) return found;
  if (found == 0) {
    txn.exec(kCreateSchema);
  }
  for (int v = std::max(found, 1) + 1; v <= kFleetSchemaVersion; ++v) {
    txn.exec(kMigrations[v - 2]);
  }
  txn.exec("DELETE FROM tunedb_fleet_schema");
  txn.exec("INSERT INTO tunedb_fleet_schema(version) VALUES (" +
           std::to_string(kFleetSchemaVersion) + ")");
  return found;
}

}  // namespace tunedb
