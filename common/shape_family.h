// A key's family and the distance between shapes: the rules a prediction
// for a key never tuned (server/tuning/shape_predictor.h) and the store's
// index of stored shapes (store/sql/record_shapes.h) share, once.
//
// A family is every key field but the batch, the channels and the input
// size, with a depthwise convolution's groups counted as "depthwise" (so
// depthwise layers of any width are one family). Shapes of one family are
// compared by the sum of the absolute differences of their sizes' logs.
//
// FamilyHash is stored (the record_shapes index): a change to FamilyText is a
// schema change whose migration computes the stored hashes again.
//
// Thread safety: pure functions.
#ifndef TUNEDB_COMMON_SHAPE_FAMILY_H_
#define TUNEDB_COMMON_SHAPE_FAMILY_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "tunedb/problem.h"

namespace tunedb {

// The family of `key`: its key fields but n, c, k and in, with groups
// "depthwise" where groups == c == k. Keys of one family share it.
std::string FamilyText(const ProblemKey& key);
// Whether `a` and `b` are of one family (FamilyText), without formatting
// either key.
bool SameFamily(const ProblemKey& a, const ProblemKey& b);
// 32 bits of the key hash (KeyTextHash) of FamilyText(key): equal for keys
// of one family (rarely, for two families too).
int32_t FamilyHash(const ProblemKey& key);

// Sum over n, c, k and each input dim of |ln(a) - ln(b)|: 0 for the same
// shape, ln 2 for one dim doubled. A size that is not positive adds nothing.
double ShapeDistance(const ConvProblem& a, const ConvProblem& b);

// Every two shapes of valid keys (sizes 1 .. 2^31-1) are within this
// ShapeDistance of each other: 6 dims of at most ln(2^31) each.
inline constexpr double kMaxShapeDistance = 130.0;

// ln n, ln c, ln k and the ln of each of the first spatial_dims input sizes
// (0 past them); nullopt where one of them is not positive (ShapeDistance
// leaves such a term out). For shapes of equal spatial_dims, ShapeDistance
// is the sum of the absolute differences of these.
using ShapePoint = std::array<double, 3 + ConvProblem::kMaxSpatialDims>;
std::optional<ShapePoint> ShapeLogs(const ConvProblem& problem);

}  // namespace tunedb

#endif  // TUNEDB_COMMON_SHAPE_FAMILY_H_
