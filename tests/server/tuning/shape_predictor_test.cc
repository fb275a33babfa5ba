// Predictions for keys never tuned: the family, the distance between
// shapes and the nearest tuned problems' vote.
#include "server/tuning/shape_predictor.h"

#include <cmath>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

using testing_util::TestRecord;

// TestRecord(1) reshaped to batch n and channels c -> k, its fastest
// result `algo` (0.5 ms; the other OK one 1.0 ms).
std::shared_ptr<const Record> Tuned(int64_t n, int64_t c, int algo) {
  Record r = TestRecord(1);
  r.key.problem.n = n;
  r.key.problem.c = c;
  r.key.problem.k = c;
  int ok = 0;
  for (AlgoResult& a : r.results) {
    if (a.status != AlgoStatus::kOk) continue;
    a.algo = ok == 0 ? algo : 100 + algo;
    a.launch = {ok == 0 ? 0.5 : 1.0, 0, 3};
    a.heuristic_rank = 0;
    ++ok;
  }
  return std::make_shared<const Record>(std::move(r));
}

ProblemKey KeyOf(int64_t n, int64_t c) {
  ProblemKey key = TestRecord(1).key;
  key.problem.n = n;
  key.problem.c = c;
  key.problem.k = c;
  return key;
}

TEST(ShapePredictorTest, AFamilyIsTheKeyWithoutItsBatchChannelsAndSize) {
  ProblemKey a = KeyOf(8, 64), b = KeyOf(32, 128);
  b.problem.input = {112, 112, 1};
  EXPECT_EQ(FamilyText(a), FamilyText(b));
  EXPECT_EQ(FamilyText(a).find(" n="), std::string::npos);
  ProblemKey strided = a;
  strided.problem.stride = {1, 1, 1};  // the stem's is 2x2
  EXPECT_NE(FamilyText(a), FamilyText(strided));
  // Depthwise layers of any width are one family.
  ProblemKey dw32 = KeyOf(8, 32), dw96 = KeyOf(8, 96);
  dw32.problem.groups = 32;
  dw96.problem.groups = 96;
  EXPECT_EQ(FamilyText(dw32), FamilyText(dw96));
  EXPECT_NE(FamilyText(dw32).find("groups=depthwise"), std::string::npos);
  // SameFamily says the same without formatting the keys.
  EXPECT_TRUE(SameFamily(a, b));
  EXPECT_FALSE(SameFamily(a, strided));
  EXPECT_TRUE(SameFamily(dw32, dw96));
  EXPECT_FALSE(SameFamily(a, dw32));
}

TEST(ShapePredictorTest, DistanceIsTheSumOfLogRatios) {
  const ProblemKey a = KeyOf(8, 64);
  EXPECT_DOUBLE_EQ(ShapeDistance(a.problem, a.problem), 0);
  EXPECT_NEAR(ShapeDistance(a.problem, KeyOf(16, 64).problem), std::log(2.0),
              1e-12);
  // Channels count twice (c and k).
  EXPECT_NEAR(ShapeDistance(a.problem, KeyOf(8, 128).problem),
              2 * std::log(2.0), 1e-12);
}

TEST(ShapePredictorTest, TheNearestVotersDecideAndNameThemselves) {
  // Batch 8 and 16 chose algo 1, batch 256 algo 2; predicting batch 12.
  const std::vector<std::shared_ptr<const Record>> family = {
      Tuned(256, 64, 2), Tuned(8, 64, 1), Tuned(16, 64, 1)};
  std::optional<Prediction> p =
      PredictFrom(KeyOf(12, 64), family, Constraints(), 3);
  ASSERT_TRUE(p.has_value());
  ASSERT_EQ(p->candidates.size(), 2u);
  EXPECT_EQ(p->candidates[0].algo, 1);
  EXPECT_EQ(p->candidates[1].algo, 2);
  ASSERT_EQ(p->sources.size(), 2u);
  EXPECT_EQ(p->sources[0], Tuned(16, 64, 1)->key.ToText());  // nearer
  EXPECT_NEAR(p->distance, std::log(16.0 / 12.0), 1e-12);
  EXPECT_GT(p->confidence, 0);
  EXPECT_LT(p->confidence, 1);
  // With one voter, the nearest decides alone.
  p = PredictFrom(KeyOf(200, 64), family, Constraints(), 1);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->candidates[0].algo, 2);
}

TEST(ShapePredictorTest, ACloserShapeWeighsMoreThanTwoFarOnes) {
  const std::vector<std::shared_ptr<const Record>> family = {
      Tuned(9, 64, 7), Tuned(1024, 64, 3), Tuned(2048, 64, 3)};
  std::optional<Prediction> p =
      PredictFrom(KeyOf(8, 64), family, Constraints(), 3);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->candidates[0].algo, 7);
}

TEST(ShapePredictorTest, OtherFamiliesTheKeyItselfAndUnsupportedDoNotVote) {
  Record other = *Tuned(8, 64, 5);
  other.key.problem.stride = {1, 1, 1};  // the stem's is 2x2
  Record unsupported = *Tuned(8, 64, 6);
  for (AlgoResult& a : unsupported.results) a.status = AlgoStatus::kNotSupported;
  const std::vector<std::shared_ptr<const Record>> family = {
      std::make_shared<const Record>(other),
      std::make_shared<const Record>(unsupported), Tuned(16, 64, 4)};
  // The key itself (batch 16) is stored: no vote of its own.
  EXPECT_FALSE(PredictFrom(KeyOf(16, 64), family, Constraints(), 3));
  std::optional<Prediction> p =
      PredictFrom(KeyOf(12, 64), family, Constraints(), 3);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->candidates.size(), 1u);
  EXPECT_EQ(p->candidates[0].algo, 4);
  EXPECT_FALSE(PredictFrom(KeyOf(12, 64), {}, Constraints(), 3));
}

TEST(ShapePredictorTest, EachVoteIsTheNeighboursChoiceUnderTheConstraints) {
  // The fastest of batch 8 needs 1 GiB of workspace; under a 0-byte limit
  // the neighbour votes for its runner-up.
  Record r = *Tuned(8, 64, 1);
  for (AlgoResult& a : r.results) {
    if (a.algo == 1) a.workspace_bytes = int64_t{1} << 30;
    if (a.algo == 101) a.workspace_bytes = 0;
  }
  const std::vector<std::shared_ptr<const Record>> family = {
      std::make_shared<const Record>(r)};
  Constraints c;
  c.max_workspace_bytes = 0;
  std::optional<Prediction> p = PredictFrom(KeyOf(16, 64), family, c, 3);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->candidates[0].algo, 101);
  EXPECT_TRUE(p->candidates[0].plan.empty());
}

TEST(ShapePredictorTest, TheDistanceIsTheNearestVotersNotTheNearestShapes) {
  // Batch 16 needs 1 GiB of workspace for everything; under a 0-byte limit
  // it cannot vote for batch 17, and batch 64 answers alone.
  Record near = *Tuned(16, 64, 1);
  for (AlgoResult& a : near.results) a.workspace_bytes = int64_t{1} << 30;
  Record far = *Tuned(64, 64, 2);
  for (AlgoResult& a : far.results) a.workspace_bytes = 0;
  const std::vector<std::shared_ptr<const Record>> family = {
      std::make_shared<const Record>(near), std::make_shared<const Record>(far)};
  Constraints c;
  c.max_workspace_bytes = 0;
  std::optional<Prediction> p = PredictFrom(KeyOf(17, 64), family, c, 3);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->candidates[0].algo, 2);
  EXPECT_NEAR(p->distance, std::log(64.0 / 17.0), 1e-9);
}

TEST(ShapePredictorTest, ARuntimeCompiledChoiceVotesAsBuiltNotAsLoaded) {
  // Batch 8's fastest (algo 1, 0.5 ms) is compiled at run time in 600 ms and
  // its search kept the plan, so a caller that loads plans gets it there.
  // A new shape has no plan: over 1,000 calls the build adds 0.6 ms a call,
  // and the precompiled runner-up (1.0 ms) is the cheaper answer.
  Record r = *Tuned(8, 64, 1);
  for (AlgoResult& a : r.results) {
    if (a.algo != 1) continue;
    a.behavior_notes = NoteBit(kBehaviorNoteRuntimeCompilation);
    a.build_ms = 600;
    a.plan = "a plan for batch 8";
  }
  const std::vector<std::shared_ptr<const Record>> family = {
      std::make_shared<const Record>(r)};
  Constraints loads;
  loads.loads_stored_plans = true;
  loads.compile_horizon_calls = 1000;
  ASSERT_EQ(Choose(r, loads)->algo, 1);  // the neighbour's own answer
  std::optional<Prediction> p = PredictFrom(KeyOf(16, 64), family, loads, 3);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->candidates[0].algo, 101);
  // Where the build is not weighed, the faster config still wins.
  loads.compile_horizon_calls = 0;
  p = PredictFrom(KeyOf(16, 64), family, loads, 3);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->candidates[0].algo, 1);
}

}  // namespace
}  // namespace tunedb
