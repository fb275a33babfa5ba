// The fleet database's schema (PostgreSQL): its version table, the DDL of
// each version and the forward migrations, run by every daemon at connect
// under an advisory lock (so daemons starting together migrate once).
//
// Version history:
//   1  fleet_records (every host's measurement of a key: indexed key columns
//      and the record as its export-format line), fleet_leases (who
//      searches a key now) and fleet_jobs (fleet prewarm).
//   2  fleet_jobs.revalidate_from (a job may be a revalidation; 0: none).
//      A build of version 1 refuses a version-2 database: upgrade every
//      daemon of the fleet together.
//
// Thread safety: free functions on a transaction the caller owns.
#ifndef TUNEDB_STORE_FLEET_FLEET_SCHEMA_H_
#define TUNEDB_STORE_FLEET_FLEET_SCHEMA_H_

#include "pqxx/pqxx"

namespace tunedb {

// The fleet schema version this build writes and reads.
inline constexpr int kFleetSchemaVersion = 2;

// The database's schema version, 0 where it has none yet.
int ReadFleetSchemaVersion(pqxx::work& txn);

// Creates or migrates the schema to kFleetSchemaVersion in `txn`. Returns
// the version found before; one newer than kFleetSchemaVersion is left
// untouched (the caller refuses it).
int CreateOrMigrateFleetSchema(pqxx::work& txn);

}  // namespace tunedb

#endif  // TUNEDB_STORE_FLEET_FLEET_SCHEMA_H_
