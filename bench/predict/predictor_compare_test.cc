// ComparePredictors and CompareVersions on made-up records whose winners
// are known.
#include "bench/predict/predictor_compare.h"

#include <cmath>

#include "gtest/gtest.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

using testing_util::TestKey;

AlgoResult Timed(int algo, double ms, int heuristic_rank = 0) {
  AlgoResult r = testing_util::OkResult(algo);
  r.launch.median_ms = ms;
  r.launch.samples = 3;
  r.gpu.median_ms = ms;
  r.heuristic_rank = heuristic_rank;
  r.retimed = true;
  return r;
}

// A record of TestKey(n): algo 1 is fastest up to n = 16, algo 2 above;
// algo 3, the heuristic's first choice, is always 10 % off the fastest.
Record Made(int64_t n) {
  Record r;
  r.key = TestKey(n);
  const bool small = n <= 16;
  r.results = {Timed(1, small ? 1.0 : 2.0), Timed(2, small ? 1.5 : 1.0),
               Timed(3, 1.1, /*heuristic_rank=*/1)};
  return r;
}

// The whole group's score (the first; its split by distance follows).
const PredictorScore& Score(const std::vector<GroupScores>& groups,
                            const std::string& name) {
  EXPECT_GE(groups.size(), 2u);
  return groups.at(0).by_predictor.at(name);
}

TEST(PredictorCompareTest, TheNearestShapesVotePicksEachHeldOutKeysFastest) {
  // By shape: 8 tuned, 12 held out, 48 tuned, 64 held out.
  const auto groups =
      ComparePredictors({Made(64), Made(8), Made(48), Made(12)}, 1);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].group, "legacy f32");
  EXPECT_EQ(groups[0].tuned, 2);
  // Both held-out keys are 0.29 and 0.41 from their nearest tuned shape.
  EXPECT_EQ(groups[1].group, "legacy f32, nearest 0.25-1");
  EXPECT_EQ(groups[1].tuned, 2);
  EXPECT_EQ(groups[1].by_predictor.at("nearest").keys, 2);
  const PredictorScore& nearest = Score(groups, "nearest");
  EXPECT_EQ(nearest.keys, 2);
  EXPECT_DOUBLE_EQ(nearest.geomean_ratio, 1.0);
  EXPECT_EQ(nearest.share_over_5pct, 0);
  EXPECT_EQ(nearest.fallbacks, 0);
  const PredictorScore& heuristic = Score(groups, "heuristic");
  EXPECT_NEAR(heuristic.geomean_ratio, 1.1, 1e-9);
  EXPECT_EQ(heuristic.share_over_5pct, 1.0);
}

TEST(PredictorCompareTest, AnotherSearchsChoiceIsJudgedOnTheseRecordsWhereItHoldsTheKey) {
  // The other search found algo 2 fastest at 12 (here 1.5x off) and did not
  // search 64: one key judged, 1.5x.
  Record again = Made(12);
  again.results = {Timed(2, 0.9), Timed(1, 1.0), Timed(3, 1.1, 1)};
  const auto groups = ComparePredictors(
      {Made(64), Made(8), Made(48), Made(12)}, 1, {again, Made(8)});
  const PredictorScore& another = Score(groups, "another search");
  EXPECT_EQ(another.keys, 1);
  EXPECT_NEAR(another.geomean_ratio, 1.5, 1e-9);
  EXPECT_EQ(another.share_over_5pct, 1.0);
  EXPECT_EQ(another.fallbacks, 0);
  EXPECT_EQ(ComparePredictors({Made(8), Made(12)}, 1)
                .at(0)
                .by_predictor.count("another search"),
            0u);
}

TEST(PredictorCompareTest, TheFamilyBestIsTheConfigOfLeastMeanRegret) {
  // Tuned: algo 1 is 2x off at 48, algo 2 1.5x off at 8, algo 3 1.1x off
  // at both: algo 3 has the least mean log-regret, and is 1.1x off on both
  // held-out keys.
  const auto groups =
      ComparePredictors({Made(8), Made(12), Made(48), Made(64)}, 1);
  const PredictorScore& best = Score(groups, "family-best");
  EXPECT_EQ(best.keys, 2);
  EXPECT_NEAR(best.geomean_ratio, 1.1, 1e-9);
  EXPECT_NEAR(best.worst_ratio, 1.1, 1e-9);
}

TEST(PredictorCompareTest, APredictedConfigTheKeyNeverTimedFallsToTheHeuristic) {
  Record tuned = Made(8);
  tuned.results = {Timed(4, 0.5), Timed(3, 1.1, 1)};  // 4: unknown at 12
  Record held = Made(12);
  held.results = {Timed(1, 1.0), Timed(3, 1.1, 1)};
  const auto groups = ComparePredictors({tuned, held}, 1);
  const PredictorScore& nearest = Score(groups, "nearest");
  EXPECT_EQ(nearest.keys, 1);
  EXPECT_EQ(nearest.fallbacks, 1);
  EXPECT_NEAR(nearest.geomean_ratio, 1.1, 1e-9);
}

TEST(PredictorCompareTest, AHeldOutKeyWithoutTheHeuristicsPickIsNotJudged) {
  Record held = Made(12);
  for (AlgoResult& r : held.results) r.heuristic_rank = 0;
  const auto groups = ComparePredictors({Made(8), held}, 1);
  EXPECT_TRUE(groups.empty());
}

TEST(PredictorCompareTest, FindTimesAreNotComparedAsIfTheyWereSteady) {
  // At 12, algo 1 has only its Find time (its kernels' first run, 3x its
  // steady cost): the nearest vote's algo 1 counts as not timed there and
  // falls to a later candidate; the fastest steady time there is the
  // heuristic's algo 3 (1.1; algo 2 takes 1.5).
  Record held = Made(12);
  held.results[0].launch.median_ms = 3.0;
  held.results[0].retimed = false;
  const auto groups = ComparePredictors({Made(8), held}, 1);
  const PredictorScore& nearest = Score(groups, "nearest");
  EXPECT_EQ(nearest.fallbacks, 1);
  EXPECT_NEAR(nearest.geomean_ratio, 1.0, 1e-9);
  // And a key whose heuristic pick has only its Find time is not judged.
  Record unsteady = Made(12);
  unsteady.results[2].retimed = false;
  EXPECT_TRUE(ComparePredictors({Made(8), unsteady}, 1).empty());
}

// TestKey(8) under cuDNN `version` with `results`.
Record Versioned(int version, std::vector<AlgoResult> results) {
  Record r;
  r.key = TestKey(8);
  r.key.device.cudnn_version = version;
  r.results = std::move(results);
  return r;
}

// The new version's record: algo 2 is fastest, the old winner algo 1 is
// 20 % off it, the heuristic's algo 3 10 %.
Record NewRecord() {
  return Versioned(91900, {Timed(2, 1.0), Timed(3, 1.1, 1), Timed(1, 1.2)});
}

const PredictorScore& VersionScore(const VersionComparison& c,
                                   const std::string& group,
                                   const std::string& name) {
  for (const GroupScores& g : c.groups) {
    if (g.group == group) return g.by_predictor.at(name);
  }
  ADD_FAILURE() << "no group " << group;
  static const PredictorScore none;
  return none;
}

TEST(CompareVersionsTest, TheOldChoiceIsTimedInTheNewVersionsRecord) {
  const Record old =
      Versioned(91400, {Timed(1, 0.8), Timed(2, 0.9), Timed(3, 1.0, 1)});
  const VersionComparison c =
      CompareVersions({old}, {NewRecord()}, Constraints{});
  EXPECT_EQ(c.target_keys, 1);
  EXPECT_EQ(c.held_by_source, 1);
  EXPECT_EQ(c.not_judged, 0);
  ASSERT_EQ(c.groups.size(), 3u);
  EXPECT_EQ(c.groups[0].group, "all");
  EXPECT_EQ(c.groups[1].group, "legacy f32");
  EXPECT_EQ(c.groups[1].tuned, 1);
  EXPECT_EQ(c.groups[2].group, "legacy f32, fwd");
  EXPECT_EQ(c.groups[2].tuned, 1);
  const PredictorScore& old_choice = VersionScore(c, "all", "old choice");
  EXPECT_EQ(old_choice.keys, 1);
  EXPECT_EQ(old_choice.fallbacks, 0);
  EXPECT_NEAR(old_choice.geomean_ratio, 1.2, 1e-9);
  EXPECT_EQ(old_choice.share_over_5pct, 1.0);
  EXPECT_NEAR(VersionScore(c, "all", "heuristic").geomean_ratio, 1.1, 1e-9);
  EXPECT_NEAR(VersionScore(c, "all", "tunedb").geomean_ratio, 1.0, 1e-9);
  EXPECT_EQ(c.old_choice_faster, 0);
  EXPECT_EQ(c.heuristic_faster, 1);
}

TEST(CompareVersionsTest, TheOldChoiceIsTheDaemonsNotTheOldFastest) {
  // The old fastest (algo 1) beats the old heuristic's pick (algo 3) by
  // 1 %, less than kMinGainOverHeuristic: the daemon answers algo 3.
  const Record old = Versioned(91400, {Timed(1, 1.0), Timed(3, 1.01, 1)});
  const VersionComparison c =
      CompareVersions({old}, {NewRecord()}, Constraints{});
  EXPECT_NEAR(VersionScore(c, "all", "old choice").geomean_ratio, 1.1, 1e-9);
}

TEST(CompareVersionsTest, AnOldChoiceTheNewRecordNeverTimedFallsBack) {
  // Algo 4 is not in the new record: the next old candidate, algo 2, is
  // taken (the fastest there).
  const Record old = Versioned(91400, {Timed(4, 0.5), Timed(2, 0.9)});
  const VersionComparison fell = CompareVersions({old}, {NewRecord()}, {});
  const PredictorScore& next = VersionScore(fell, "all", "old choice");
  EXPECT_EQ(next.fallbacks, 1);
  EXPECT_NEAR(next.geomean_ratio, 1.0, 1e-9);
  // With no old candidate timed there, the heuristic's pick is.
  const Record unknown = Versioned(91400, {Timed(4, 0.5), Timed(5, 0.9)});
  const VersionComparison none =
      CompareVersions({unknown}, {NewRecord()}, {});
  const PredictorScore& heuristic = VersionScore(none, "all", "old choice");
  EXPECT_EQ(heuristic.fallbacks, 1);
  EXPECT_NEAR(heuristic.geomean_ratio, 1.1, 1e-9);
}

TEST(CompareVersionsTest, OnlyKeysTheOldVersionHoldsAreJudged) {
  Record other_problem = NewRecord();
  other_problem.key = TestKey(12);
  Record same_version = NewRecord();
  same_version.key.problem.n = 12;  // the source holds it, but under 9.19
  const Record old = Versioned(91400, {Timed(1, 0.8)});
  const VersionComparison c = CompareVersions(
      {old, same_version}, {NewRecord(), other_problem}, Constraints{});
  EXPECT_EQ(c.target_keys, 2);
  EXPECT_EQ(c.held_by_source, 1);
  EXPECT_EQ(VersionScore(c, "all", "old choice").keys, 1);
}

TEST(CompareVersionsTest, ANewKeyWithoutASteadyHeuristicTimeIsNotJudged) {
  Record target = NewRecord();
  target.results[1].retimed = false;  // the heuristic's: its Find time only
  const VersionComparison c = CompareVersions(
      {Versioned(91400, {Timed(1, 0.8)})}, {target}, Constraints{});
  EXPECT_EQ(c.held_by_source, 1);
  EXPECT_EQ(c.not_judged, 1);
  EXPECT_TRUE(c.groups.empty());
}

// Algo 5 compiled at run time in 20 s (2 ms a call over 10,000 calls),
// with its plan.
AlgoResult Compiled(double ms) {
  AlgoResult r = Timed(5, ms);
  r.behavior_notes = NoteBit(kBehaviorNoteRuntimeCompilation);
  r.build_ms = 20000;
  r.plan = "a plan of this cuDNN";
  return r;
}

TEST(CompareVersionsTest, TheOldChoiceWeighsABuildItsPlanCannotSpare) {
  // Algo 5 runs fastest under both versions; the old choice carries no
  // plan, so for the preload's caller it costs 0.5 + 2 ms a call, and
  // algo 2 is answered (2x the fastest run time); the new record's own
  // choice loads its plan. Without a compile horizon, both take algo 5.
  const Record old = Versioned(91400, {Compiled(0.5), Timed(2, 1.0)});
  const Record target =
      Versioned(91900, {Compiled(0.5), Timed(2, 1.0), Timed(3, 1.1, 1)});
  Constraints preload;
  preload.loads_stored_plans = true;
  const VersionComparison c = CompareVersions({old}, {target}, preload);
  EXPECT_NEAR(VersionScore(c, "all", "old choice").geomean_ratio, 2.0, 1e-9);
  EXPECT_NEAR(VersionScore(c, "all", "tunedb").geomean_ratio, 1.0, 1e-9);
  EXPECT_NEAR(VersionScore(c, "all", "heuristic").geomean_ratio, 2.2, 1e-9);
  preload.compile_horizon_calls = 0;
  EXPECT_NEAR(VersionScore(CompareVersions({old}, {target}, preload), "all",
                           "old choice")
                  .geomean_ratio,
              1.0, 1e-9);
}

}  // namespace
}  // namespace tunedb
