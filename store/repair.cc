#include "store/repair.h"

#include <sqlite3.h>

#include <cstdint>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "store/sql/statement.h"

namespace tunedb {
namespace {

// Rows that cannot be read are moved here by QuarantineBadRows. The copied
// columns have no declared type, so every value keeps the storage class and
// bytes it had. Created on first use, outside the versioned schema: nothing
// but QuarantineBadRows reads or writes them.
constexpr const char kCreateQuarantine[] =
    "CREATE TABLE IF NOT EXISTS quarantined_records("
    " quarantine_id INTEGER PRIMARY KEY, quarantined_at_us INTEGER NOT NULL,"
    " reason TEXT NOT NULL, id, key_version, key_hash, key_text, gpu_model,"
    " cudnn_version, op, measured_at_us, host, gpu_uuid, driver_version,"
    " finder, repeats, workspace_cap_bytes, search_ms, verified, served_count,"
    " last_served_us, timing_version, in_type, layout, revalidated_from,"
    " revalidated_from_driver);"
    "CREATE TABLE IF NOT EXISTS quarantined_results("
    " quarantine_id INTEGER NOT NULL, record_id, rank, algo, math_type,"
    " status, gpu_median_ms, gpu_spread_ms, gpu_samples, workspace_bytes,"
    " deterministic, retimed, error, launch_median_ms, launch_spread_ms,"
    " launch_samples, host_median_ms, host_spread_ms, host_samples, knobs,"
    " numerical_notes, behavior_notes, plan, build_ms, heuristic_rank)";

constexpr const char kQuarantineRecord[] =
    "INSERT INTO quarantined_records(quarantined_at_us, reason, id,"
    " key_version, key_hash, key_text, gpu_model, cudnn_version, op,"
    " measured_at_us, host, gpu_uuid, driver_version, finder, repeats,"
    " workspace_cap_bytes, search_ms, verified, served_count, last_served_us,"
    " timing_version, in_type, layout, revalidated_from,"
    " revalidated_from_driver)"
    " SELECT ?2, ?3, id, key_version, key_hash, key_text, gpu_model,"
    " cudnn_version, op, measured_at_us, host, gpu_uuid, driver_version,"
    " finder, repeats, workspace_cap_bytes, search_ms, verified, served_count,"
    " last_served_us, timing_version, in_type, layout, revalidated_from,"
    " revalidated_from_driver FROM records"
    " WHERE id = ?1"
    " RETURNING quarantine_id";

constexpr const char kQuarantineResults[] =
    "INSERT INTO quarantined_results(quarantine_id, record_id, rank, algo,"
    " math_type, status, gpu_median_ms, gpu_spread_ms, gpu_samples,"
    " workspace_bytes, deterministic, retimed, error, launch_median_ms,"
    " launch_spread_ms, launch_samples, host_median_ms, host_spread_ms,"
    " host_samples, knobs, numerical_notes, behavior_notes, plan, build_ms,"
    " heuristic_rank)"
    " SELECT ?2, record_id, rank, algo, math_type, status, gpu_median_ms,"
    " gpu_spread_ms, gpu_samples, workspace_bytes, deterministic, retimed,"
    " error, launch_median_ms, launch_spread_ms, launch_samples,"
    " host_median_ms, host_spread_ms, host_samples, knobs, numerical_notes,"
    " behavior_notes, plan, build_ms, heuristic_rank"
    " FROM results WHERE record_id = ?1";

// Columns that the quarantine tables gained after they were first made
// (schema 4's in_type and layout, schema 5's engine config, schema 8's
// build time and heuristic rank, schema 9's and 10's provenance): a file
// quarantined under an older schema has the tables without them.
constexpr std::pair<const char*, const char*> kQuarantineLaterColumns[] = {
    {"quarantined_records", "in_type"},
    {"quarantined_records", "layout"},
    {"quarantined_records", "revalidated_from"},
    {"quarantined_records", "revalidated_from_driver"},
    {"quarantined_results", "knobs"},
    {"quarantined_results", "numerical_notes"},
    {"quarantined_results", "behavior_notes"},
    {"quarantined_results", "plan"},
    {"quarantined_results", "build_ms"},
    {"quarantined_results", "heuristic_rank"}};

absl::Status CreateQuarantine(sql::Database& db) {
  RETURN_IF_ERROR(db.Execute(kCreateQuarantine));
  for (const auto& [table, column] : kQuarantineLaterColumns) {
    ASSIGN_OR_RETURN(const int64_t present,
                     db.QueryInt64(absl::StrCat(
                         "SELECT COUNT(*) FROM pragma_table_info('", table,
                         "') WHERE name = '", column, "'")));
    if (present == 0) {
      RETURN_IF_ERROR(db.Execute(
          absl::StrCat("ALTER TABLE ", table, " ADD COLUMN ", column)));
    }
  }
  return absl::OkStatus();
}

// Copies one bad record row and its results into the quarantine tables.
absl::Status CopyToQuarantine(sql::Database& db, const BadRow& bad,
                              int64_t now_us) {
  ASSIGN_OR_RETURN(sql::Statement keep,
                   db.GetCachedStatement(kQuarantineRecord));
  keep.BindInt64(1, bad.id);
  keep.BindInt64(2, now_us);
  keep.BindText(3, bad.reason);
  ASSIGN_OR_RETURN(bool row, keep.Step());
  if (!row) {
    return absl::InternalError(absl::StrCat(
        db.path(), ": quarantining record ", bad.id, " returned no id"));
  }
  const int64_t quarantine_id = keep.ColumnInt64(0);
  RETURN_IF_ERROR(keep.Run());
  ASSIGN_OR_RETURN(sql::Statement keep_results,
                   db.GetCachedStatement(kQuarantineResults));
  keep_results.BindInt64(1, bad.id);
  keep_results.BindInt64(2, quarantine_id);
  return keep_results.Run();
}

// Deletes the bad record rows (their results go by ON DELETE CASCADE). A
// damaged value in an indexed column has index entries that do not agree
// with it, and SQLite refuses to delete such a row (SQLITE_CORRUPT_INDEX)
// unless writable_schema is on; the caller then rebuilds the indexes from
// the rows that are left.
absl::Status DeleteBadRows(sql::Database& db, const std::vector<BadRow>& bad) {
  RETURN_IF_ERROR(db.Execute("PRAGMA writable_schema = ON"));
  absl::Status erased = absl::OkStatus();
  for (const BadRow& row : bad) {
    erased = db.Execute(
        absl::StrCat("DELETE FROM main.records WHERE id = ", row.id));
    if (!erased.ok()) break;
  }
  RETURN_IF_ERROR(db.Execute("PRAGMA writable_schema = OFF"));
  return erased;
}

}  // namespace

absl::Status QuarantineRows(sql::Database& db, const std::vector<BadRow>& bad) {
  if (bad.empty()) return absl::OkStatus();
  RETURN_IF_ERROR(CreateQuarantine(db));
  const int64_t now_us = absl::ToUnixMicros(absl::Now());
  for (const BadRow& row : bad) {
    RETURN_IF_ERROR(CopyToQuarantine(db, row, now_us));
  }
  RETURN_IF_ERROR(DeleteBadRows(db, bad));
  return RebuildRecordIndexes(db);
}

bool IsIndexCorruption(const absl::Status& status) {
  return absl::IsFailedPrecondition(status) &&
         absl::StrContains(
             status.message(),
             absl::StrCat("(SQLite code ", SQLITE_CORRUPT_INDEX, ")"));
}

absl::Status RebuildRecordIndexes(sql::Database& db) {
  return db.Execute("REINDEX main.records; REINDEX main.results");
}

}  // namespace tunedb
