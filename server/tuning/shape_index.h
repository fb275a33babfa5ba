// ShapeIndex: the records of one key family (shape_predictor.h) in a k-d
// tree over their shapes' logs (ln n, ln c, ln k and the ln of each input
// size), so a prediction reads the records near a key's shape instead of
// every record of its family.
//
// ShapeDistance is the L1 distance between those points (for shapes of one
// family: their spatial_dims agree), so the records within distance R of a
// key are a range query of the tree. Predict asks for a growing R until
// enough of them can vote (PredictNearest); its answer is PredictFrom's over
// the whole family, exactly (ties too: the records keep their family order).
//
// Thread safety: immutable after construction; const methods may be called
// from any thread.
#ifndef TUNEDB_SERVER_TUNING_SHAPE_INDEX_H_
#define TUNEDB_SERVER_TUNING_SHAPE_INDEX_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/prediction.h"
#include "common/shape_family.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

// Records of a key's family within some radius of its shape (others may be
// among them: they are ignored), in id order: every one, or where `more`,
// the nearest (by ShapeDistance, then id) of them. `whole`: they are every
// record of the family.
struct NearRecords {
  std::vector<std::shared_ptr<const Record>> records;
  bool more = false;
  bool whole = false;
};
// Reads the records within ShapeDistance `radius` of a key's shape, at
// least the nearest `limit` of them.
using ReadNear =
    std::function<absl::StatusOr<NearRecords>(double radius, int limit)>;

// PredictFrom(key, family, constraints, neighbours) over a family that
// `read_near` reads a radius at a time: it asks for a growing radius (and,
// where the nearest records read cannot vote, more of them) until enough
// records within it can vote (or it read the whole family), and answers
// from those: the nearest voters are among them. The one search of the
// nearest shapes: ShapeIndex reads them from its tree, FamilyCache from the
// store's index. Errors: `read_near`'s.
absl::StatusOr<std::optional<Prediction>> PredictNearest(
    const ProblemKey& key, const Constraints& constraints, int neighbours,
    const ReadNear& read_near);

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
