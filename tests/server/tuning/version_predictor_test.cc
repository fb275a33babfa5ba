// Predictions from the same problem tuned under another cuDNN version.
#include "server/tuning/version_predictor.h"

#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

using testing_util::TestRecord;

// TestRecord(1) under cuDNN `version`: its fastest OK result `algo` at
// `best_ms`, the other OK one at 1.0 ms, each with a plan.
Record Under(int version, int algo, double best_ms = 0.5) {
  Record r = TestRecord(1);
  r.key.device.cudnn_version = version;
  int ok = 0;
  for (AlgoResult& a : r.results) {
    if (a.status != AlgoStatus::kOk) continue;
    a.algo = ok == 0 ? algo : 100 + algo;
    a.launch = {ok == 0 ? best_ms : 1.0, 0, 3};
    a.heuristic_rank = 0;
    a.plan = "a plan of this cuDNN";
    ++ok;
  }
  return r;
}

ProblemKey KeyUnder(int version) {
  ProblemKey key = TestRecord(1).key;
  key.device.cudnn_version = version;
  return key;
}

TEST(VersionPredictorTest, TheNearestOlderVersionsChoiceLeadsWithoutItsPlan) {
  const std::vector<Record> others = {Under(90100, 1), Under(91400, 2),
                                      Under(92000, 3)};
  std::optional<Prediction> p =
      PredictFromOtherVersion(KeyUnder(91900), others, Constraints{});
  ASSERT_TRUE(p.has_value());
  ASSERT_GE(p->candidates.size(), 2u);
  EXPECT_EQ(p->candidates[0].algo, 2);
  EXPECT_EQ(p->candidates[1].algo, 102);
  for (const AlgoResult& c : p->candidates) EXPECT_TRUE(c.plan.empty());
  EXPECT_EQ(p->sources, std::vector<std::string>{KeyUnder(91400).ToText()});
  EXPECT_DOUBLE_EQ(p->distance, 0);
  // A lead of 1.0 ms over 0.5 ms: m = 1, confidence 1 / 1.05.
  EXPECT_NEAR(p->confidence, 1 / 1.05, 1e-9);
}

TEST(VersionPredictorTest, WithoutAnOlderVersionTheNearestNewerOneAnswers) {
  const std::vector<Record> others = {Under(92200, 4), Under(92000, 3)};
  std::optional<Prediction> p =
      PredictFromOtherVersion(KeyUnder(91900), others, Constraints{});
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->candidates[0].algo, 3);
}

TEST(VersionPredictorTest, ACloseRaceHasLowConfidence) {
  std::optional<Prediction> p = PredictFromOtherVersion(
      KeyUnder(91900), {Under(91400, 2, 0.99)}, Constraints{});
  ASSERT_TRUE(p.has_value());
  EXPECT_LT(p->confidence, 0.2);
}

TEST(VersionPredictorTest, OtherGpusOtherProblemsAndTheKeyItselfDoNotAnswer) {
  Record other_gpu = Under(91400, 2);
  other_gpu.key.device.gpu_model = "Another GPU";
  Record other_problem = Under(91400, 2);
  other_problem.key.problem.n *= 2;
  Record itself = Under(91900, 2);
  EXPECT_FALSE(PredictFromOtherVersion(KeyUnder(91900),
                                       {other_gpu, other_problem, itself},
                                       Constraints{})
                   .has_value());
}

TEST(VersionPredictorTest, TheCallersConstraintsChooseAndFilter) {
  Record r = Under(91400, 2);
  // Only deterministic configs: the one that is not drops out.
  for (AlgoResult& a : r.results) a.deterministic = a.algo != 2;
  Constraints det;
  det.deterministic_only = true;
  std::optional<Prediction> p =
      PredictFromOtherVersion(KeyUnder(91900), {r}, det);
  ASSERT_TRUE(p.has_value());
  for (const AlgoResult& c : p->candidates) EXPECT_NE(c.algo, 2);
}

TEST(VersionPredictorTest, TheFilterReadsEveryVersionOfTheProblemOnThisGpu) {
  const RecordFilter f = OtherVersionsFilter(KeyUnder(91900));
  EXPECT_EQ(f.fields.count("cudnn"), 0u);
  EXPECT_EQ(f.fields.count("cuda"), 0u);
  EXPECT_TRUE(f.Matches(Under(91400, 2)));
  Record other_problem = Under(91400, 2);
  other_problem.key.problem.n *= 2;
  EXPECT_FALSE(f.Matches(other_problem));
}

TEST(VersionPredictorTest, ARuntimeCompiledChoiceCountsItsBuildAsThePlanCannotLoad) {
  // The old version's fastest (algo 1, 0.5 ms) compiles at run time in
  // 600 ms (0.6 ms a call over 1,000: 1.1 ms, against the precompiled
  // runner-up's 1.0 ms); its plan is the old cuDNN's and never loads under
  // the new one.
  Record old = Under(91400, 1);
  for (AlgoResult& a : old.results) {
    if (a.algo != 1) continue;
    a.behavior_notes = NoteBit(kBehaviorNoteRuntimeCompilation);
    a.build_ms = 600;
  }
  Constraints loads;
  loads.loads_stored_plans = true;
  loads.compile_horizon_calls = 1000;
  ASSERT_EQ(Choose(old, loads)->algo, 1);
  std::optional<Prediction> p =
      PredictFromOtherVersion(KeyUnder(91900), {old}, loads);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->candidates[0].algo, 101);
}

}  // namespace
}  // namespace tunedb
