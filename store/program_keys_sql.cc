#include "store/program_keys_sql.h"

#include <set>

#include "common/status_macros.h"
#include "store/sql/statement.h"

namespace tunedb {
namespace {

constexpr const char kUpsert[] =
    "INSERT INTO program_keys(program, device, request, last_asked_us) "
    "VALUES(?1, ?2, ?3, ?4) ON CONFLICT(program, device, request) DO UPDATE "
    "SET last_asked_us = max(last_asked_us, excluded.last_asked_us)";
// The program's rows past its newest ?2 (LIMIT -1: no limit after OFFSET).
constexpr const char kDropOldest[] =
    "DELETE FROM program_keys WHERE program = ?1 AND (device, request) IN ("
    "SELECT device, request FROM program_keys WHERE program = ?1 "
    "ORDER BY last_asked_us DESC, device DESC, request DESC "
    "LIMIT -1 OFFSET ?2)";
constexpr const char kTotalsOfOne[] =
    "SELECT count(*), coalesce(sum(length(request)), 0), "
    "coalesce(max(last_asked_us), 0) FROM program_keys WHERE program = ?1";
constexpr const char kTotalsOfAll[] =
    "SELECT program, count(*), sum(length(request)), max(last_asked_us) "
    "FROM program_keys GROUP BY program ORDER BY program";
constexpr const char kRead[] =
    "SELECT request, last_asked_us FROM program_keys "
    "WHERE program = ?1 AND device = ?2 "
    "ORDER BY last_asked_us DESC, request DESC LIMIT ?3";
constexpr const char kDelete[] = "DELETE FROM program_keys WHERE program = ?1";

absl::StatusOr<ProgramTotals> TotalsOf(sql::Database& db,
                                       const std::string& program) {
  ASSIGN_OR_RETURN(sql::Statement totals, db.GetCachedStatement(kTotalsOfOne));
  totals.BindText(1, program);
  ASSIGN_OR_RETURN(bool row, totals.Step());
  ProgramTotals out;
  out.program = program;
  if (row) {
    out.keys = totals.ColumnInt64(0);
    out.bytes = totals.ColumnInt64(1);
    out.last_asked_us = totals.ColumnInt64(2);
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<ProgramTotals>> WriteProgramKeyRows(
    sql::Database& db, const std::vector<ProgramKey>& rows,
    int64_t max_keys_per_program) {
  std::set<std::string> programs;
  {
    ASSIGN_OR_RETURN(sql::Statement upsert, db.GetCachedStatement(kUpsert));
    for (const ProgramKey& row : rows) {
      upsert.Reset();
      upsert.BindText(1, row.program);
      upsert.BindText(2, row.device);
      upsert.BindBlob(3, row.request);
      upsert.BindInt64(4, row.last_asked_us);
      RETURN_IF_ERROR(upsert.Run());
      programs.insert(row.program);
    }
  }
  std::vector<ProgramTotals> totals;
  for (const std::string& program : programs) {
    ASSIGN_OR_RETURN(ProgramTotals one, TotalsOf(db, program));
    if (one.keys > max_keys_per_program) {
      {
        ASSIGN_OR_RETURN(sql::Statement drop,
                         db.GetCachedStatement(kDropOldest));
        drop.BindText(1, program);
        drop.BindInt64(2, max_keys_per_program);
        RETURN_IF_ERROR(drop.Run());
      }
      ASSIGN_OR_RETURN(one, TotalsOf(db, program));
    }
    totals.push_back(std::move(one));
  }
  return totals;
}

absl::StatusOr<std::vector<ProgramKey>> ReadProgramKeyRows(
    sql::Database& db, const std::string& program, const std::string& device,
    int64_t limit) {
  ASSIGN_OR_RETURN(sql::Statement read, db.GetCachedStatement(kRead));
  read.BindText(1, program);
  read.BindText(2, device);
  read.BindInt64(3, limit > 0 ? limit : -1);
  std::vector<ProgramKey> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, read.Step());
    if (!row) return out;
    ProgramKey key;
    key.program = program;
    key.device = device;
    key.request = read.ColumnBlob(0);
    key.last_asked_us = read.ColumnInt64(1);
    out.push_back(std::move(key));
  }
}

absl::StatusOr<std::vector<ProgramTotals>> ReadProgramTotals(
    sql::Database& db) {
  ASSIGN_OR_RETURN(sql::Statement read, db.GetCachedStatement(kTotalsOfAll));
  std::vector<ProgramTotals> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, read.Step());
    if (!row) return out;
    ProgramTotals totals;
    totals.program = read.ColumnText(0);
    totals.keys = read.ColumnInt64(1);
    totals.bytes = read.ColumnInt64(2);
    totals.last_asked_us = read.ColumnInt64(3);
    out.push_back(std::move(totals));
  }
}

absl::Status DeleteProgramKeyRows(sql::Database& db,
                                  const std::vector<std::string>& programs) {
  ASSIGN_OR_RETURN(sql::Statement drop, db.GetCachedStatement(kDelete));
  for (const std::string& program : programs) {
    drop.Reset();
    drop.BindText(1, program);
    RETURN_IF_ERROR(drop.Run());
  }
  return absl::OkStatus();
}

}  // namespace tunedb
