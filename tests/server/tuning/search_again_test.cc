// The rules of a search again: which configs its stored record has too far
// behind to run again, and how their results are carried.
#include "server/tuning/search_again.h"

#include <vector>

#include "gtest/gtest.h"
#include "server/finder/finder.h"

namespace tunedb {
namespace {

AlgoResult Ok(int algo, double ms, bool deterministic, int heuristic_rank = 0) {
  AlgoResult r;
  r.algo = algo;
  r.status = AlgoStatus::kOk;
  r.launch = {ms, 0, 3};
  r.deterministic = deterministic;
  if (!deterministic) {
    r.numerical_notes = NoteBit(kNumericalNoteNondeterministic);
  }
  r.heuristic_rank = heuristic_rank;
  r.plan = "a stored plan";
  return r;
}

// A graph-API record: engine 1 leads at 1 ms; 2 is 4x behind; 3 (cuDNN's
// first choice), 4 (the fastest deterministic config) and 5 are 6-8x
// behind; 6 did not build.
Record Stored() {
  Record r;
  r.key.device.gpu_model = "NVIDIA H200";
  r.key.device.cudnn_version = 91900;
  r.key.problem.n = 8;
  r.key.problem.api = ConvApi::kGraph;
  r.timing_version = kCurrentTimingVersion;
  r.results = {Ok(1, 1.0, false), Ok(2, 4.0, false), Ok(3, 6.0, false, 1),
               Ok(4, 7.0, true), Ok(5, 8.0, false)};
  AlgoResult failed;
  failed.algo = 6;
  failed.status = AlgoStatus::kFailed;
  r.results.push_back(failed);
  return r;
}

std::vector<int> Algos(const std::vector<AlgoResult>& results) {
  std::vector<int> out;
  for (const AlgoResult& r : results) out.push_back(r.algo);
  return out;
}

TEST(SearchAgainTest, FarBehindListsOkConfigsAtLeastTheFactorBehindTheLeader) {
  const std::vector<AlgoResult> behind = FarBehind(Stored(), 5, 3);
  EXPECT_EQ(Algos(behind), std::vector<int>({5}));
  ASSERT_EQ(behind.size(), 1u);
  EXPECT_EQ(behind[0].plan, "a stored plan");  // as stored
  EXPECT_EQ(behind[0].launch.median_ms, 8.0);
  EXPECT_EQ(Algos(FarBehind(Stored(), 3, 3)), std::vector<int>({2, 5}));
}

TEST(SearchAgainTest, CudnnsFirstChoicesAndFrameworkFiltersChoicesAlwaysRun) {
  // 3 is cuDNN's first choice; 4 is what a deterministic caller gets.
  const std::vector<AlgoResult> behind = FarBehind(Stored(), 5, 3);
  for (const AlgoResult& r : behind) {
    EXPECT_NE(r.algo, 3);
    EXPECT_NE(r.algo, 4);
  }
  // With no first choice counted, 3 is far behind like any other.
  EXPECT_EQ(Algos(FarBehind(Stored(), 5, 0)), std::vector<int>({3, 5}));
}

TEST(SearchAgainTest, NothingIsSkippedForLegacyStaleOrFactorOneRecords) {
  Record legacy = Stored();
  legacy.key.problem.api = ConvApi::kLegacy;
  EXPECT_TRUE(FarBehind(legacy, 5, 3).empty());
  Record stale = Stored();
  stale.timing_version = kCurrentTimingVersion - 1;
  EXPECT_TRUE(FarBehind(stale, 5, 3).empty());
  EXPECT_TRUE(FarBehind(Stored(), 1, 3).empty());
  EXPECT_TRUE(FarBehind(Stored(), 0, 3).empty());
}

TEST(SearchAgainTest, CarryAddsOnlyConfigsTheSearchDidNotReturnAndSorts) {
  std::vector<AlgoResult> results = {Ok(2, 3.5, false), Ok(1, 1.1, false),
                                     Ok(5, 7.0, false)};
  const std::vector<AlgoResult> behind = {Ok(5, 8.0, false),
                                          Ok(7, 9.0, false)};
  CarryFarBehind(behind, -1, results);
  EXPECT_EQ(Algos(results), std::vector<int>({1, 2, 5, 7}));
  EXPECT_EQ(results[2].launch.median_ms, 7.0);  // run again: its new time
  EXPECT_EQ(results[3].launch.median_ms, 9.0);  // carried as stored
  EXPECT_EQ(results[3].plan, "a stored plan");
}

TEST(SearchAgainTest, NothingIsCarriedWhereNoConfigThatRanIsOk) {
  AlgoResult failed = Ok(1, 0, false);
  failed.status = AlgoStatus::kFailed;
  std::vector<AlgoResult> results = {failed};
  CarryFarBehind({Ok(7, 9.0, false)}, -1, results);
  EXPECT_EQ(Algos(results), std::vector<int>({1}));
}

TEST(SearchAgainTest, AConfigNeedingMoreWorkspaceThanOfferedIsNotCarried) {
  AlgoResult big = Ok(7, 9.0, false);
  big.workspace_bytes = 2 << 20;
  AlgoResult small = Ok(8, 9.5, false);
  small.workspace_bytes = 1 << 20;
  std::vector<AlgoResult> results = {Ok(1, 1.0, false)};
  CarryFarBehind({big, small}, 1 << 20, results);
  EXPECT_EQ(Algos(results), std::vector<int>({1, 8}));
}

}  // namespace
}  // namespace tunedb
