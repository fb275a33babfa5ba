// The records of a key's family near its shape (Store::FamilyNear), read
// through the index of stored shapes (store/sql/record_shapes.h): one box
// query of the R*Tree, its rows ordered by a lower bound of their distance,
// then the rows it names by id, nearest bound first, each ranked by its
// exact ShapeDistance, until the nearest `limit` are known.
//
// Internal to tunedb_store. Thread safety: free functions on a Database the
// caller holds exclusively.
#ifndef TUNEDB_STORE_SHAPE_SCAN_H_
#define TUNEDB_STORE_SHAPE_SCAN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "store/sql/database.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

// The current-version records of `key`'s family (SameFamily) within
// ShapeDistance `radius` of its shape, `key`'s own included: the nearest
// `limit` of them (by distance, then id; limit <= 0: all), in id order,
// with their plans left empty; rows that cannot be read are left out.
// *more: records within `radius` were left out (or may have been). Runs in
// the caller's transaction.
absl::StatusOr<std::vector<Record>> ScanFamilyNear(sql::Database& db,
                                                   const ProblemKey& key,
                                                   double radius, int limit,
                                                   bool* more);

// The SELECT ScanFamilyNear runs (for EXPLAIN QUERY PLAN in tests).
std::string FamilyNearSql();

}  // namespace tunedb

#endif  // TUNEDB_STORE_SHAPE_SCAN_H_
