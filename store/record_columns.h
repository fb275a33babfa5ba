// The column lists of the store's record and result rows, as string-literal
// macros so that the SQL built from them (store/record_rows.cc,
// record_scan.cc, staged_import.cc) is spliced together at compile time.
// The columns themselves are declared in store/sql/store_schema.cc.
//
// Internal to tunedb_store.
#ifndef TUNEDB_STORE_RECORD_COLUMNS_H_
#define TUNEDB_STORE_RECORD_COLUMNS_H_

// Columns of a record row, in the order ReadRecordKey and ReadRecordFields
// expect.
#define TUNEDB_RECORD_COLUMNS                                              \
  "id, key_text, measured_at_us, host, gpu_uuid, driver_version, finder, " \
  "repeats, workspace_cap_bytes, search_ms, verified, served_count, "      \
  "timing_version, key_hash, gpu_model, op, cudnn_version, in_type, "      \
  "layout, revalidated_from, revalidated_from_driver"

// Columns a record write sets, in the order BindRecord binds them.
#define TUNEDB_RECORD_WRITE_COLUMNS                                         \
  "key_version, key_hash, key_text, gpu_model, cudnn_version, op, in_type," \
  " layout, measured_at_us, host, gpu_uuid, driver_version, finder,"        \
  " repeats, workspace_cap_bytes, search_ms, verified, served_count,"       \
  " timing_version, revalidated_from, revalidated_from_driver"

// A record write replaces an existing row of its key in place (same id);
// served_count and last_served_us are left alone.
#define TUNEDB_RECORD_UPSERT                                                 \
  " ON CONFLICT(key_text) DO UPDATE SET"                                     \
  " key_version = excluded.key_version, key_hash = excluded.key_hash,"       \
  " gpu_model = excluded.gpu_model, cudnn_version = excluded.cudnn_version," \
  " op = excluded.op, in_type = excluded.in_type,"                           \
  " layout = excluded.layout, measured_at_us = excluded.measured_at_us,"     \
  " host = excluded.host, gpu_uuid = excluded.gpu_uuid,"                     \
  " driver_version = excluded.driver_version, finder = excluded.finder,"     \
  " repeats = excluded.repeats,"                                             \
  " workspace_cap_bytes = excluded.workspace_cap_bytes,"                     \
  " search_ms = excluded.search_ms, verified = excluded.verified,"           \
  " timing_version = excluded.timing_version,"                              \
  " revalidated_from = excluded.revalidated_from,"                          \
  " revalidated_from_driver = excluded.revalidated_from_driver"

// Columns of a result row after its record_id, in the order BindResult
// binds them.
#define TUNEDB_RESULT_WRITE_COLUMNS                                         \
  "rank, algo, math_type, status, workspace_bytes, deterministic, retimed," \
  " error, launch_median_ms, launch_spread_ms, launch_samples,"             \
  " gpu_median_ms, gpu_spread_ms, gpu_samples,"                             \
  " host_median_ms, host_spread_ms, host_samples,"                          \
  " knobs, numerical_notes, behavior_notes, plan, build_ms, heuristic_rank"

namespace tunedb {

// The number of TUNEDB_RECORD_WRITE_COLUMNS.
inline constexpr int kRecordWriteColumns = 21;

}  // namespace tunedb

#endif  // TUNEDB_STORE_RECORD_COLUMNS_H_
