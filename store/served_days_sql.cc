#include "store/served_days_sql.h"

#include "common/status_macros.h"
#include "store/sql/statement.h"

namespace tunedb {
namespace {

constexpr int64_t kMicrosPerDay = int64_t{86400} * 1000 * 1000;

// The record's device columns and search time, read in the statement: an
// unknown id selects no row. (WHERE before ON CONFLICT: SQLite's parse of
// an upsert from a SELECT needs one.)
constexpr const char kAddRow[] =
    "INSERT INTO served_days(day, gpu_model, cudnn_version, program, served,"
    " saved_ms) SELECT ?1, gpu_model, cudnn_version, ?2, ?3, ?3 * search_ms"
    " FROM records WHERE id = ?4"
    " ON CONFLICT(day, gpu_model, cudnn_version, program) DO UPDATE SET"
    " served = served + excluded.served,"
    " saved_ms = saved_ms + excluded.saved_ms";
constexpr const char kDropOld[] = "DELETE FROM served_days WHERE day < ?1";
constexpr const char kRead[] =
    "SELECT day, program, sum(served), sum(saved_ms) FROM served_days"
    " WHERE day >= ?1 GROUP BY day, program ORDER BY day, program";

}  // namespace

int64_t UtcDayOfMicros(int64_t unix_us) {
  // Floor division: a time before the epoch is on a negative day.
  int64_t day = unix_us / kMicrosPerDay;
  if (unix_us % kMicrosPerDay < 0) --day;
  return day;
}

absl::Status AddServedDayRows(sql::Database& db,
                              const std::vector<ServedCount>& counts,
                              int64_t day) {
  ASSIGN_OR_RETURN(sql::Statement add, db.GetCachedStatement(kAddRow));
  for (const ServedCount& c : counts) {
    add.Reset();
    add.BindInt64(1, day);
    add.BindText(2, c.program);
    add.BindInt64(3, c.count);
    add.BindInt64(4, c.id);
    RETURN_IF_ERROR(add.Run());
  }
  ASSIGN_OR_RETURN(sql::Statement drop, db.GetCachedStatement(kDropOld));
  drop.BindInt64(1, day - kServedDaysKept);
  return drop.Run();
}

absl::StatusOr<std::vector<ServedDayProgram>> ReadServedDayRows(
    sql::Database& db, int64_t since_day) {
  ASSIGN_OR_RETURN(sql::Statement read, db.GetCachedStatement(kRead));
  read.BindInt64(1, since_day);
  std::vector<ServedDayProgram> rows;
  while (true) {
    ASSIGN_OR_RETURN(bool row, read.Step());
    if (!row) return rows;
    rows.push_back({read.ColumnInt64(0), read.ColumnText(1),
                    read.ColumnInt64(2), read.ColumnDouble(3)});
  }
}

}  // namespace tunedb
