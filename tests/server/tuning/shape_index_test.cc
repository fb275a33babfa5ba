// ShapeIndex: a prediction that reads only the records near a key's shape
// answers exactly as PredictFrom over the whole family.
#include "server/tuning/shape_index.h"

#include <cmath>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "server/tuning/shape_predictor.h"
#include "tests/server/tuning/expect_same_prediction.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

using testing_util::ExpectSame;
using testing_util::TestRecord;

ProblemKey Shaped(int64_t n, int64_t c, int64_t k, int64_t h, int64_t w) {
  ProblemKey key = TestRecord(1).key;
  key.problem.n = n;
  key.problem.c = c;
  key.problem.k = k;
  key.problem.input[0] = h;
  key.problem.input[1] = w;
  return key;
}

// A record of `key` whose fastest OK result is `algo`, and whose OK results
// need `workspace` bytes each.
std::shared_ptr<const Record> Tuned(const ProblemKey& key, int algo,
                                    int64_t workspace) {
  Record r = TestRecord(1);
  r.key = key;
  int ok = 0;
  for (AlgoResult& a : r.results) {
    if (a.status != AlgoStatus::kOk) continue;
    a.algo = ok == 0 ? algo : 100 + algo;
    a.launch = {ok == 0 ? 0.5 : 1.0, 0, 3};
    a.heuristic_rank = 0;
    a.workspace_bytes = workspace;
    ++ok;
  }
  return std::make_shared<const Record>(std::move(r));
}

TEST(ShapeIndexTest, TheDistanceIsTheL1DistanceOfTheLogs) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int64_t> size(1, 4096);
  for (int i = 0; i < 1000; ++i) {
    const ProblemKey a = Shaped(size(rng), size(rng), size(rng), size(rng),
                                size(rng));
    const ProblemKey b = Shaped(size(rng), size(rng), size(rng), size(rng),
                                size(rng));
    const ShapePoint pa = *ShapeLogs(a.problem), pb = *ShapeLogs(b.problem);
    double l1 = 0;
    for (size_t d = 0; d < pa.size(); ++d) l1 += std::fabs(pa[d] - pb[d]);
    EXPECT_NEAR(l1, ShapeDistance(a.problem, b.problem), 1e-9);
  }
  EXPECT_FALSE(ShapeLogs(Shaped(0, 8, 8, 8, 8).problem));
}

// Families with shapes near and far, repeated shapes (ties), records with
// nothing that meets the constraints, unsupported records and records of
// another family: every answer is PredictFrom's over the whole family.
TEST(ShapeIndexTest, PredictsAsPredictFromOverTheWholeFamily) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> pow2(0, 9);
  std::uniform_int_distribution<int> algo(0, 4);
  std::uniform_int_distribution<int> percent(0, 99);
  const auto dim = [&] { return int64_t{1} << pow2(rng); };
  ShapeIndex::Records family;
  for (int i = 0; i < 3000; ++i) {
    ProblemKey key = Shaped(dim(), dim(), dim(), dim(), dim());
    const int p = percent(rng);
    if (p < 5) key.problem.stride = {1, 1, 1};  // another family
    std::shared_ptr<const Record> r =
        Tuned(key, algo(rng), p < 30 ? int64_t{1} << 30 : int64_t{1} << 20);
    if (p >= 95) {
      Record unsupported = *r;
      for (AlgoResult& a : unsupported.results) a.status = AlgoStatus::kFailed;
      r = std::make_shared<const Record>(std::move(unsupported));
    }
    family.push_back(r);
  }
  const ShapeIndex index(family);
  Constraints small;
  small.max_workspace_bytes = int64_t{64} << 20;
  for (int q = 0; q < 300; ++q) {
    const ProblemKey key = q % 10 == 0 ? family[q]->key  // a stored shape
                                       : Shaped(dim() + 1, dim(), dim(),
                                                dim(), dim());
    for (const Constraints& c : {Constraints(), small}) {
      for (int neighbours : {1, 3, 5}) {
        const std::string at = key.ToText() + " neighbours " +
                               std::to_string(neighbours);
        ExpectSame(PredictFrom(key, family, c, neighbours),
                   index.Predict(key, c, neighbours), at);
      }
    }
  }
}

TEST(ShapeIndexTest, AKeyWithoutALogSizeAndAnEmptyFamily) {
  const ShapeIndex empty({});
  EXPECT_FALSE(empty.Predict(Shaped(8, 8, 8, 8, 8), Constraints(), 3));
  ShapeIndex::Records family = {Tuned(Shaped(8, 8, 8, 8, 8), 2, 1 << 20),
                                nullptr,
                                Tuned(Shaped(8, 8, 8, 0, 8), 3, 1 << 20)};
  const ShapeIndex index(family);
  const ProblemKey zero = Shaped(8, 8, 8, 0, 8);
  ExpectSame(PredictFrom(zero, family, Constraints(), 3),
             index.Predict(zero, Constraints(), 3), "zero");
  const ProblemKey near = Shaped(9, 8, 8, 8, 8);
  ExpectSame(PredictFrom(near, family, Constraints(), 3),
             index.Predict(near, Constraints(), 3), "near");
  EXPECT_EQ(index.records().size(), 3u);
}

}  // namespace
}  // namespace tunedb
