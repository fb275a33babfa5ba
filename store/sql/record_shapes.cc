#include "store/sql/record_shapes.h"

#include <cmath>

#include "common/shape_family.h"
#include "common/status_macros.h"

namespace tunedb {
namespace {

constexpr const char kPutRecordShape[] = TUNEDB_RECORD_SHAPES_INSERT
    " VALUES(?1, ?2, ?2 + 1, ?3, ?3 + 1, ?4, ?4 + 1, ?5, ?5 + 1, ?6,"
    " ?6 + 1)";

// Each stored and each query value is within 0.5 of its exact value.
constexpr int64_t kRounding = 1;

int32_t Scaled(double log) {
  return static_cast<int32_t>(std::llround(log * kShapeScale));
}

}  // namespace

std::optional<ShapeCell> ShapeCellOf(const ProblemKey& key) {
  const std::optional<ShapePoint> logs = ShapeLogs(key.problem);
  if (!logs) return std::nullopt;
  const double n = (*logs)[0], c = (*logs)[1], k = (*logs)[2];
  double inputs = 0;
  for (int i = 3; i < static_cast<int>(logs->size()); ++i) inputs += (*logs)[i];
  ShapeCell cell;
  // 31 bits: room for the cell's upper bound, family + 1.
  cell.family = static_cast<int32_t>(static_cast<uint32_t>(FamilyHash(key)) %
                                     0x7fffffffu);
  cell.at = {Scaled(n + c), Scaled(n - c), Scaled(k + inputs),
             Scaled(k - inputs)};
  return cell;
}

void BindShapeCell(sql::Statement& statement, int first,
                   const ShapeCell& cell) {
  statement.BindInt64(first, cell.family);
  for (size_t d = 0; d < cell.at.size(); ++d) {
    statement.BindInt64(first + 1 + static_cast<int>(d), cell.at[d]);
  }
}

ShapeBox ShapeBoxAround(const ShapeCell& cell, double radius) {
  const int64_t reach =
      static_cast<int64_t>(std::ceil(radius * kShapeScale)) + kRounding;
  ShapeBox box;
  box.family = cell.family;
  for (size_t d = 0; d < cell.at.size(); ++d) {
    box.at[d] = cell.at[d];
    box.lo[d] = cell.at[d] - reach;
    box.hi[d] = cell.at[d] + reach;
  }
  box.distance = reach + kShapeRounding;
  return box;
}

absl::Status PutRecordShape(sql::Database& db, int64_t id,
                            const ProblemKey& key) {
  const std::optional<ShapeCell> cell = ShapeCellOf(key);
  if (!cell) return absl::OkStatus();
  ASSIGN_OR_RETURN(sql::Statement put, db.GetCachedStatement(kPutRecordShape));
  put.BindInt64(1, id);
  BindShapeCell(put, 2, *cell);
  return put.Run();
}

absl::Status FillRecordShapes(sql::Database& db) {
  ASSIGN_OR_RETURN(sql::Statement rows,
                   db.GetUniqueStatement("SELECT id, key_text FROM records"
                                         " WHERE key_version = ?1"));
  rows.BindInt(1, kKeyFormatVersion);
  while (true) {
    ASSIGN_OR_RETURN(bool row, rows.Step());
    if (!row) return absl::OkStatus();
    // A key that does not parse is a row Get and Query report as bad (and
    // QuarantineBadRows moves): no record to find near a shape.
    absl::StatusOr<ProblemKey> key = ProblemKey::Parse(rows.ColumnText(1));
    if (!key.ok()) continue;
    RETURN_IF_ERROR(PutRecordShape(db, rows.ColumnInt64(0), *key));
  }
}

}  // namespace tunedb
