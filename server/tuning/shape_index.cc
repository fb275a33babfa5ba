#include "server/tuning/shape_index.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "common/status_macros.h"
#include "server/tuning/shape_predictor.h"

namespace tunedb {
namespace {

// The first radius read, and the factor it grows by.
constexpr double kFirstRadius = 0.1;
constexpr double kGrowth = 1.5;
// Room for the rounding of the sums of logs.
constexpr double kSlack = 1e-9;
// The nearest records read at first, per neighbour asked for.
constexpr int kFirstLimit = 4;
// Ranges this small are read point by point.
constexpr size_t kLeaf = 8;

}  // namespace

absl::StatusOr<std::optional<Prediction>> PredictNearest(
    const ProblemKey& key, const Constraints& constraints, int neighbours,
    const ReadNear& read_near) {
  const Constraints voting = PredictionConstraints(constraints);
  int limit = kFirstLimit * std::max(neighbours, 1);
  for (double radius = kFirstRadius;;) {
    ASSIGN_OR_RETURN(const NearRecords near, read_near(radius, limit));
    // Enough voters within `radius`: the nearest ones are all in `near`,
    // and PredictFrom stops before any farther record. Or every record
    // read: the whole family's answer.
    int voters = 0;
    for (size_t i = 0; i < near.records.size() && voters < neighbours; ++i) {
      const Record* r = near.records[i].get();
      if (r != nullptr && r->supported() && !(r->key == key) &&
          SameFamily(key, r->key) &&
          ShapeDistance(key.problem, r->key.problem) <= radius &&
          Choose(*r, voting).has_value()) {
        ++voters;
      }
    }
    if (voters >= neighbours || near.whole) {
      return PredictFrom(key, near.records, constraints, neighbours);
    }
    // The nearest records read could not all vote: more of them, else a
    // larger radius.
    if (near.more) {
      limit = limit >= (1 << 28) ? 0 : limit * 4;  // 0: all
    } else {
      radius *= kGrowth;
    }
  }
}

ShapeIndex::ShapeIndex(Records records) : records_(std::move(records)) {
  for (size_t i = 0; i < records_.size(); ++i) {
    std::optional<ShapePoint> point;
    if (records_[i] != nullptr) point = ShapeLogs(records_[i]->key.problem);
    if (point) {
      points_.emplace_back(*point, i);
    } else {
      unsized_.push_back(i);
    }
  }
  axis_.resize(points_.size());
  Build(0, points_.size());
}

void ShapeIndex::Build(size_t lo, size_t hi) {
  if (hi - lo <= kLeaf) return;
  // Split on the axis the points spread most along.
  ShapePoint min = points_[lo].first, max = min;
  for (size_t i = lo + 1; i < hi; ++i) {
    for (size_t a = 0; a < min.size(); ++a) {
      min[a] = std::min(min[a], points_[i].first[a]);
      max[a] = std::max(max[a], points_[i].first[a]);
    }
  }
  size_t axis = 0;
  for (size_t a = 1; a < min.size(); ++a) {
    if (max[a] - min[a] > max[axis] - min[axis]) axis = a;
  }
  const size_t mid = lo + (hi - lo) / 2;
  std::nth_element(points_.begin() + lo, points_.begin() + mid,
                   points_.begin() + hi, [axis](const auto& a, const auto& b) {
                     return a.first[axis] < b.first[axis];
                   });
  axis_[mid] = static_cast<uint8_t>(axis);
  Build(lo, mid);
  Build(mid + 1, hi);
}

void ShapeIndex::Within(const ShapePoint& q, double radius, size_t lo,
                        size_t hi, ShapePoint& gaps, double bound,
                        std::vector<size_t>* near) const {
  const auto visit = [&](size_t i) {
    double d = 0;
    for (size_t a = 0; a < q.size(); ++a) {
      d += std::fabs(q[a] - points_[i].first[a]);
    }
    if (d <= radius + kSlack) near->push_back(points_[i].second);
  };
  if (hi - lo <= kLeaf) {
    for (size_t i = lo; i < hi; ++i) visit(i);
    return;
  }
  const size_t mid = lo + (hi - lo) / 2;
  visit(mid);
  const size_t axis = axis_[mid];
  const double split = points_[mid].first[axis];
  const double old_gap = gaps[axis];
  // Left: points at most `split` on the axis; right: at least.
  const double left_gap = std::max(old_gap, q[axis] - split);
  const double right_gap = std::max(old_gap, split - q[axis]);
  if (bound - old_gap + left_gap <= radius + kSlack) {
    gaps[axis] = left_gap;
    Within(q, radius, lo, mid, gaps, bound - old_gap + left_gap, near);
  }
  if (bound - old_gap + right_gap <= radius + kSlack) {
    gaps[axis] = right_gap;
    Within(q, radius, mid + 1, hi, gaps, bound - old_gap + right_gap, near);
  }
  gaps[axis] = old_gap;
}

std::vector<size_t> ShapeIndex::Near(const ShapePoint& q,
                                     double radius) const {
  std::vector<size_t> near = unsized_;
  ShapePoint gaps{};
  Within(q, radius, 0, points_.size(), gaps, 0, &near);
  std::sort(near.begin(), near.end());
  return near;
}

std::optional<Prediction> ShapeIndex::Predict(const ProblemKey& key,
                                              const Constraints& constraints,
                                              int neighbours) const {
  const std::optional<ShapePoint> q = ShapeLogs(key.problem);
  if (!q) return PredictFrom(key, records_, constraints, neighbours);
  // Reading the tree cannot fail.
  return *PredictNearest(
      key, constraints, neighbours,
      [&](double radius, int) -> absl::StatusOr<NearRecords> {
        const std::vector<size_t> near = Near(*q, radius);
        NearRecords out;
        out.whole = near.size() == records_.size();
        out.records.reserve(near.size());
        for (size_t i : near) out.records.push_back(records_[i]);
        return out;
      });
}

}  // namespace tunedb
