// The index of stored shapes (schema 12): record_shapes, an R*Tree with one
// point per record: its family (common/shape_family.h: FamilyHash) and the
// logs of its sizes, so "the records of this key's family near its shape"
// is a box query, not a read of the family.
//
// Four dims of shape, from ln n, ln c, ln k and the sum of the input
// sizes' logs (the R*Tree has five dims at most, the family hash taking
// one): the sums and differences of the pairs (ln n, ln c) and (ln k, the
// inputs' sum). |x| + |y| is max(|x + y|, |x - y|), so the L1 distance of
// the four logs is max(|d n_plus_c|, |d n_minus_c|) + max(|d k_plus_in|,
// |d k_minus_in|), and a box of half-width R in these dims has 6 times
// the volume of the ball of radius R, where a box in the logs themselves
// would have 24 times (a cube's over a ball's of L1 in 4 dims). The
// inputs' sum differs between two shapes by at most the sum of their
// differences, so that distance is a lower bound of ShapeDistance: the box
// and the distance bound hold every record within a ShapeDistance, and the
// caller ranks what they return exactly.
//
// Each value is stored as round(value * kShapeScale) in a 32-bit integer
// (rtree_i32), a record's point v as the cell [v, v + 1]: the R*Tree
// places entries by the volume of boxes, which a dim of no extent would
// make 0 for every box (and its tree no better than random). A query
// compares the lower bounds, the points themselves.
//
// A row is written with its record (PutRecordShape, in the record's
// transaction; an import's commit writes its rows with INSERT ... SELECT),
// and a trigger on records deletes it with its record (a Delete, a
// quarantine). FillRecordShapes builds every row of a database migrated
// from version 11. A record whose key has a size that is not positive
// (never a valid key) has no row.
//
// Internal to tunedb_store. Thread safety: free functions on a Database the
// caller holds exclusively.
#ifndef TUNEDB_STORE_SQL_RECORD_SHAPES_H_
#define TUNEDB_STORE_SQL_RECORD_SHAPES_H_

#include <array>
#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "store/sql/database.h"
#include "store/sql/statement.h"
#include "tunedb/problem.h"

namespace tunedb {

// The most a scaled distance of the four logs between two cells, computed
// from their rounded values, exceeds the exact one (scaled): 0.5 for each
// of two values in each of the two pairs' max.
inline constexpr int64_t kShapeRounding = 2;

// A value is stored as round(value * kShapeScale): a step of about 1e-6,
// and the largest (ln k and 3 inputs' logs, each at most ln(2^31)) stays
// below 2^31.
inline constexpr double kShapeScale = 1 << 20;

// The R*Tree (schema version 12) and the trigger that deletes a record's
// row with the record.
inline constexpr const char kRecordShapesSchema[] = R"sql(
CREATE VIRTUAL TABLE IF NOT EXISTS record_shapes USING rtree_i32(
  id, family_lo, family_hi, n_plus_c_lo, n_plus_c_hi, n_minus_c_lo,
  n_minus_c_hi, k_plus_in_lo, k_plus_in_hi, k_minus_in_lo, k_minus_in_hi);
CREATE TRIGGER IF NOT EXISTS record_shapes_delete AFTER DELETE ON records BEGIN
  DELETE FROM record_shapes WHERE id = old.id;
END;
)sql";

// The start of a row's insert (or replacement), before its VALUES or
// SELECT: the id, then each dim's low and high bound (v and v + 1).
#define TUNEDB_RECORD_SHAPES_INSERT                                      \
  "INSERT OR REPLACE INTO main.record_shapes(id, family_lo, family_hi,"  \
  " n_plus_c_lo, n_plus_c_hi, n_minus_c_lo, n_minus_c_hi, k_plus_in_lo," \
  " k_plus_in_hi, k_minus_in_lo, k_minus_in_hi)"

// A record's row: its family (31 bits of FamilyHash) and its point.
struct ShapeCell {
  int32_t family = 0;
  // n_plus_c, n_minus_c, k_plus_in, k_minus_in
  std::array<int32_t, 4> at{};
};
// Nullopt where a size is not positive.
std::optional<ShapeCell> ShapeCellOf(const ProblemKey& key);
// Binds cell.family to parameter `first` and cell.at to the four after it.
void BindShapeCell(sql::Statement& statement, int first, const ShapeCell& cell);

// The rows within ShapeDistance `radius` of a key's cell, and perhaps a few
// farther: family == family, lo[d] <= at[d] <= hi[d], and the distance of
// the four logs (see above) at most `distance` (all scaled).
struct ShapeBox {
  int32_t family = 0;
  std::array<int64_t, 4> at{}, lo{}, hi{};
  int64_t distance = 0;
};
ShapeBox ShapeBoxAround(const ShapeCell& cell, double radius);

// Writes (or rewrites) the row of record `id`, whose key is `key`.
absl::Status PutRecordShape(sql::Database& db, int64_t id,
                            const ProblemKey& key);

// Writes the row of every current-version record whose key text parses:
// the migration to version 12, after its SQL.
absl::Status FillRecordShapes(sql::Database& db);

}  // namespace tunedb

#endif  // TUNEDB_STORE_SQL_RECORD_SHAPES_H_
