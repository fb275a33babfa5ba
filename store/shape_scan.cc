#include "store/shape_scan.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "common/shape_family.h"
#include "common/status_macros.h"
#include "store/record_columns.h"
#include "store/record_rows.h"
#include "store/sql/record_shapes.h"
#include "store/sql/statement.h"

namespace tunedb {
namespace {

// The ids of the rows in a ShapeBox, with the (scaled) distance of their
// four logs from the key's: nearest first. ?1 the family, ?2 .. ?9 each
// dim's bounds, ?10 .. ?13 the key's point, ?14 the distance bound.
constexpr const char kFamilyNear[] =
    "SELECT id, bound FROM (SELECT id,"
    " max(abs(n_plus_c_lo - ?10), abs(n_minus_c_lo - ?11))"
    " + max(abs(k_plus_in_lo - ?12), abs(k_minus_in_lo - ?13)) AS bound"
    " FROM record_shapes WHERE family_lo = ?1"
    " AND n_plus_c_lo BETWEEN ?2 AND ?3 AND n_minus_c_lo BETWEEN ?4 AND ?5"
    " AND k_plus_in_lo BETWEEN ?6 AND ?7"
    " AND k_minus_in_lo BETWEEN ?8 AND ?9)"
    " WHERE bound <= ?14 ORDER BY bound, id";
constexpr const char kRecordById[] =
    "SELECT " TUNEDB_RECORD_COLUMNS
    " FROM records WHERE id = ?1 AND key_version = ?2";

// Room for the rounding of the sums of logs.
constexpr double kSlack = 1e-9;

void BindBox(sql::Statement& statement, const ShapeBox& box) {
  statement.BindInt64(1, box.family);
  for (size_t d = 0; d < box.at.size(); ++d) {
    const int param = static_cast<int>(d);
    statement.BindInt64(2 + 2 * param, box.lo[d]);
    statement.BindInt64(3 + 2 * param, box.hi[d]);
    statement.BindInt64(10 + param, box.at[d]);
  }
  statement.BindInt64(14, box.distance);
}

// A record found near the key, and its ShapeDistance from it.
struct Near {
  double distance;
  Record record;
};
// Nearer first; ties by id (as PredictFrom ranks a family read in id order).
bool Nearer(const Near& a, const Near& b) {
  return a.distance < b.distance ||
         (a.distance == b.distance && a.record.id < b.record.id);
}

// Record `id` with its results (plans left empty) and its distance, if it
// is of `key`'s family, within `radius` and readable.
absl::StatusOr<std::optional<Near>> ReadNear(sql::Database& db, int64_t id,
                                             const ProblemKey& key,
                                             double radius) {
  ASSIGN_OR_RETURN(sql::Statement row, db.GetCachedStatement(kRecordById));
  row.BindInt64(1, id);
  row.BindInt(2, kKeyFormatVersion);
  ASSIGN_OR_RETURN(bool found, row.Step());
  if (!found) return std::nullopt;
  absl::StatusOr<ProblemKey> stored = ReadRecordKey(row);
  if (!stored.ok() || !SameFamily(key, *stored)) return std::nullopt;
  Near near{ShapeDistance(key.problem, stored->problem), Record()};
  if (near.distance > radius + kSlack) return std::nullopt;
  near.record.id = id;
  near.record.key = *std::move(stored);
  if (!ReadRecordFields(row, near.record).ok()) return std::nullopt;
  const absl::Status results =
      LoadResults(db, near.record, /*with_plans=*/false);
  if (absl::IsDataLoss(results)) return std::nullopt;
  RETURN_IF_ERROR(results);
  return near;
}

}  // namespace

std::string FamilyNearSql() { return kFamilyNear; }

absl::StatusOr<std::vector<Record>> ScanFamilyNear(sql::Database& db,
                                                   const ProblemKey& key,
                                                   double radius, int limit,
                                                   bool* more) {
  *more = false;
  const std::optional<ShapeCell> cell = ShapeCellOf(key);
  if (!cell) return std::vector<Record>();
  ASSIGN_OR_RETURN(sql::Statement scan, db.GetCachedStatement(kFamilyNear));
  BindBox(scan, ShapeBoxAround(*cell, radius));
  const size_t keep = limit > 0 ? static_cast<size_t>(limit) : SIZE_MAX;
  std::vector<Near> heap;  // the nearest `keep` so far; the farthest on top
  while (true) {
    ASSIGN_OR_RETURN(bool row, scan.Step());
    if (!row) break;
    // The distance of the four logs is a lower bound of ShapeDistance:
    // once `keep` records are nearer than it, no later row is.
    const double bound =
        static_cast<double>(scan.ColumnInt64(1) - kShapeRounding) / kShapeScale;
    if (heap.size() == keep && heap.front().distance < bound - kSlack) {
      *more = true;
      break;
    }
    ASSIGN_OR_RETURN(std::optional<Near> near,
                     ReadNear(db, scan.ColumnInt64(0), key, radius));
    if (!near) continue;
    heap.push_back(*std::move(near));
    std::push_heap(heap.begin(), heap.end(), Nearer);
    if (heap.size() > keep) {
      std::pop_heap(heap.begin(), heap.end(), Nearer);
      heap.pop_back();
      *more = true;
    }
  }
  std::vector<Record> records;
  records.reserve(heap.size());
  for (Near& near : heap) records.push_back(std::move(near.record));
  std::sort(records.begin(), records.end(),
            [](const Record& a, const Record& b) { return a.id < b.id; });
  return records;
}

}  // namespace tunedb
