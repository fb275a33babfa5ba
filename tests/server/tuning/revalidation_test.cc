// The rules of a revalidation: its source, what it re-times, and when the
// re-timed result stands.
#include "server/tuning/revalidation.h"

#include <vector>

#include "gtest/gtest.h"

namespace tunedb {
namespace {

AlgoResult Ok(int algo, double ms, bool deterministic = true) {
  AlgoResult r;
  r.algo = algo;
  r.status = AlgoStatus::kOk;
  r.launch = {ms, 0, 3};
  r.deterministic = deterministic;
  r.plan = "a plan of the old cuDNN";
  return r;
}

ProblemKey Key(int cudnn) {
  ProblemKey key;
  key.device.gpu_model = "NVIDIA H200";
  key.device.cudnn_version = cudnn;
  key.device.cuda_runtime_version = 13000;
  key.problem.n = 8;
  return key;
}

// cuDNN 9.14's record: algorithms 1..5 at 1..5 ms, 1 and 2
// nondeterministic, 6 not supported.
Record Old() {
  Record r;
  r.key = Key(91400);
  r.results = {Ok(1, 1.0, false), Ok(2, 2.0, false), Ok(3, 3.0), Ok(4, 4.0),
               Ok(5, 5.0)};
  AlgoResult none;
  none.algo = 6;
  none.status = AlgoStatus::kNotSupported;
  r.results.push_back(none);
  return r;
}

std::vector<int> Algos(const std::vector<AlgoResult>& v) {
  std::vector<int> out;
  for (const AlgoResult& r : v) out.push_back(r.algo);
  return out;
}

TEST(RevalidationTest, RetimesTheOldTopThreeAndTheDeterministicChoiceWithoutPlans) {
  const std::vector<AlgoResult> c = RevalidationCandidates(Old());
  EXPECT_EQ(Algos(c), (std::vector<int>{1, 2, 3}));
  for (const AlgoResult& r : c) {
    EXPECT_TRUE(r.plan.empty());
    EXPECT_FALSE(r.launch.measured());  // a config, not a measurement
  }
  // With the three fastest nondeterministic, the deterministic choice joins.
  Record old = Old();
  old.results[2].deterministic = false;
  EXPECT_EQ(Algos(RevalidationCandidates(old)), (std::vector<int>{1, 2, 3, 4}));
}

TEST(RevalidationTest, ARecordWithNothingThatRanHasNoCandidates) {
  Record old = Old();
  old.results = {old.results.back()};
  EXPECT_TRUE(RevalidationCandidates(old).empty());
}

TEST(RevalidationTest, TheSourceIsTheSameProblemOnTheSameGpuUnderTheOldVersion) {
  Record other_gpu = Old();
  other_gpu.key.device.gpu_model = "NVIDIA A100";
  Record other_problem = Old();
  other_problem.key.problem.n = 16;
  Record older = Old();
  older.key.device.cudnn_version = 90100;
  Record other_runtime = Old();
  other_runtime.key.device.cuda_runtime_version = 12080;
  other_runtime.measured_at_us = 5;
  Record old = Old();
  old.measured_at_us = 7;
  const std::vector<Record> others = {other_gpu, other_problem, older,
                                      other_runtime, old};
  const Record* source = RevalidationSource(Key(91900), 91400, others);
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->measured_at_us, 7);  // the newest of the two runtimes
  EXPECT_EQ(RevalidationSource(Key(91900), 90500, others), nullptr);
}

TEST(RevalidationTest, TheOldChoiceStillFastestIsKept) {
  const RevalidationVerdict v =
      JudgeRevalidation(Old(), {Ok(1, 0.9), Ok(2, 1.5), Ok(3, 2.0)});
  EXPECT_EQ(v.outcome, RevalidationVerdict::Outcome::kKept);
}

TEST(RevalidationTest, AnotherOldCandidateNowFastestIsAChange) {
  const RevalidationVerdict v =
      JudgeRevalidation(Old(), {Ok(1, 2.0), Ok(2, 1.0), Ok(3, 3.0)});
  EXPECT_EQ(v.outcome, RevalidationVerdict::Outcome::kChanged);
}

TEST(RevalidationTest, OldCandidatesThatNoLongerRunNeedAFullSearch) {
  AlgoResult gone = Ok(1, 0);
  gone.status = AlgoStatus::kNotSupported;
  AlgoResult first = Ok(9, 1.0);
  first.heuristic_rank = 1;
  const RevalidationVerdict v = JudgeRevalidation(Old(), {first, gone});
  EXPECT_EQ(v.outcome, RevalidationVerdict::Outcome::kFullSearch);
  EXPECT_NE(v.why.find("none of the old"), std::string::npos);
}

TEST(RevalidationTest, ANewChoiceClearlyFasterThanEveryOldOneNeedsAFullSearch) {
  AlgoResult first = Ok(9, 0.9);  // 10 % faster than the old leader's 1.0
  first.heuristic_rank = 1;
  AlgoResult second = Ok(8, 5.0);
  second.heuristic_rank = 2;
  RevalidationVerdict v = JudgeRevalidation(
      Old(), {Ok(1, 1.0), Ok(2, 2.0), Ok(3, 3.0), first, second});
  EXPECT_EQ(v.outcome, RevalidationVerdict::Outcome::kFullSearch);
  EXPECT_NE(v.why.find("no longer decides"), std::string::npos);
  // Within 2 %, the re-timed result stands: Choose serves cuDNN's first
  // choice where the fastest does not beat it by 2 %.
  first.launch.median_ms = 0.99;
  v = JudgeRevalidation(Old(), {Ok(1, 1.0), Ok(2, 2.0), Ok(3, 3.0), first});
  EXPECT_EQ(v.outcome, RevalidationVerdict::Outcome::kChanged);
  // Clearly slower, it changes nothing: the old choice stands.
  first.launch.median_ms = 1.5;
  v = JudgeRevalidation(Old(), {Ok(1, 1.0), Ok(2, 2.0), Ok(3, 3.0), first});
  EXPECT_EQ(v.outcome, RevalidationVerdict::Outcome::kKept);
}

TEST(RevalidationTest, AnOldCandidateThatIsCudnnsFirstChoiceIsJudgedAsOne) {
  // Choose's rule serves it where the fastest does not beat it by 2 %.
  AlgoResult listed = Ok(2, 1.01);
  listed.heuristic_rank = 1;
  const RevalidationVerdict v =
      JudgeRevalidation(Old(), {Ok(1, 1.0), listed, Ok(3, 3.0)});
  EXPECT_EQ(v.outcome, RevalidationVerdict::Outcome::kChanged);
}

}  // namespace
}  // namespace tunedb
