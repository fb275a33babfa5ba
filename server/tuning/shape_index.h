// ShapeIndex: the records of one key family (shape_predictor.h) in a k-d
// tree over their shapes' logs (ln n, ln c, ln k and the ln of each input
// size), so a prediction reads the records near a key's shape instead of
// every record of its family.
//
// ShapeDistance is the L1 distance between those points (for shapes of one
// family: their spatial_dims agree), so the records within distance R of a
// key are a range query of the tree. Predict asks for a growing R until
// enough of them can vote; its answer is PredictFrom's over the whole
// family, exactly (ties too: the records keep their family order).
//
// Thread safety: immutable after construction; const methods may be called
// from any thread.
#ifndef TUNEDB_SERVER_TUNING_SHAPE_INDEX_H_
#define TUNEDB_SERVER_TUNING_SHAPE_INDEX_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "common/prediction.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

// ln n, ln c, ln k and the ln of each of the first spatial_dims input sizes
// (0 past them); nullopt where one of them is not positive (ShapeDistance
// leaves such a term out). For shapes of equal spatial_dims, ShapeDistance
// is the sum of the absolute differences of these.
using ShapePoint = std::array<double, 3 + ConvProblem::kMaxSpatialDims>;
std::optional<ShapePoint> ShapeLogs(const ConvProblem& problem);

class ShapeIndex {
 public:
  using Records = std::vector<std::shared_ptr<const Record>>;

  // `records`: a family as the store gives it (id order).
  explicit ShapeIndex(Records records);

  const Records& records() const { return records_; }

  // PredictFrom(key, records(), constraints, neighbours), reading only the
  // records near `key`'s shape.
  std::optional<Prediction> Predict(const ProblemKey& key,
                                    const Constraints& constraints,
                                    int neighbours) const;

 private:
  // Orders points_[lo, hi) into a k-d tree (axis_ of each middle).
  void Build(size_t lo, size_t hi);
  // Appends to `near` the records of points_[lo, hi) within `radius` of
  // `q`; `gaps` and `bound`: per axis and summed, how far the range lies
  // from q at least.
  void Within(const ShapePoint& q, double radius, size_t lo, size_t hi,
              ShapePoint& gaps, double bound,
              std::vector<size_t>* near) const;
  // The indices into records_ of those within `radius` of `q`, and of those
  // without a point, ascending.
  std::vector<size_t> Near(const ShapePoint& q, double radius) const;

  Records records_;
  // The records with a point: (point, index into records_), as a tree.
  std::vector<std::pair<ShapePoint, size_t>> points_;
  std::vector<uint8_t> axis_;  // the split axis of the node at each middle
  // Indices of the records without a point, ascending.
  std::vector<size_t> unsized_;
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_SHAPE_INDEX_H_
