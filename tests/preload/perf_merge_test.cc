// MergeTuned, the perf array of a hit, on its own: order, de-duplication,
// the FindEx workspace limit, determinism flags and the caller's capacity.
#include "preload/perf_merge.h"

#include <gtest/gtest.h>

#include <vector>

namespace tunedb::preload {
namespace {

using Perf = cudnnConvolutionFwdAlgoPerf_t;

Perf Entry(int algo, size_t memory, bool deterministic,
           cudnnMathType_t math = CUDNN_DEFAULT_MATH,
           cudnnStatus_t status = CUDNN_STATUS_SUCCESS) {
  Perf p{};
  p.algo = static_cast<cudnnConvolutionFwdAlgo_t>(algo);
  p.status = status;
  p.time = -1;
  p.memory = memory;
  p.determinism = deterministic ? CUDNN_DETERMINISTIC : CUDNN_NON_DETERMINISTIC;
  p.mathType = math;
  return p;
}

TunedChoice Choice(int algo, int64_t workspace, std::optional<bool> det,
                   cudnnMathType_t math = CUDNN_DEFAULT_MATH) {
  TunedChoice t;
  t.algo = algo;
  t.math = math;
  t.workspace_bytes = workspace;
  t.deterministic = det;
  return t;
}

std::vector<int> Algos(const Perf* p, int n) {
  std::vector<int> out;
  for (int i = 0; i < n; ++i) out.push_back(static_cast<int>(p[i].algo));
  return out;
}

const Perf kHeuristic[] = {
    Entry(1, 100, true), Entry(0, 0, true),
    Entry(2, 400, true, CUDNN_TENSOR_OP_MATH), Entry(3, 0, false),
    Entry(5, 0, true, CUDNN_DEFAULT_MATH, CUDNN_STATUS_NOT_SUPPORTED)};

TEST(PerfMergeTest, TunedChoicesFirstThenTheHeuristicWithoutThem) {
  Perf out[8];
  const int n = MergeTuned<Perf>(
      {Choice(3, 50, false), Choice(2, 300, true, CUDNN_TENSOR_OP_MATH)},
      kHeuristic, 5, std::nullopt, out, 8);
  EXPECT_EQ(Algos(out, n), (std::vector<int>{3, 2, 1, 0, 5}));
  EXPECT_EQ(out[0].status, CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(out[0].memory, 50u);   // larger than the heuristic's 0
  EXPECT_EQ(out[1].memory, 400u);  // the heuristic's, larger than 300
  EXPECT_EQ(out[1].mathType, CUDNN_TENSOR_OP_MATH);
  EXPECT_EQ(out[4].status, CUDNN_STATUS_NOT_SUPPORTED);  // kept as reported
}

TEST(PerfMergeTest, TheSameAlgorithmUnderAnotherMathTypeIsAnotherEntry) {
  Perf out[8];
  const int n = MergeTuned<Perf>({Choice(2, 300, true, CUDNN_FMA_MATH)},
                                 kHeuristic, 5, std::nullopt, out, 8);
  EXPECT_EQ(Algos(out, n), (std::vector<int>{2, 1, 0, 2, 3, 5}));
  EXPECT_EQ(out[0].mathType, CUDNN_FMA_MATH);
}

TEST(PerfMergeTest, NothingSuccessfulNeedsMoreThanAFindExCallerGave) {
  Perf out[8];
  const int n = MergeTuned<Perf>({Choice(2, 300, true, CUDNN_TENSOR_OP_MATH)},
                                 kHeuristic, 5, size_t{200}, out, 8);
  EXPECT_EQ(Algos(out, n), (std::vector<int>{1, 0, 3, 5}));
}

TEST(PerfMergeTest,
     DeterminismIsTunedbsWhereKnownElseTheHeuristicsElseNotClaimed) {
  Perf out[8];
  MergeTuned<Perf>({Choice(1, 0, false)}, kHeuristic, 5, std::nullopt, out, 8);
  EXPECT_EQ(out[0].determinism, CUDNN_NON_DETERMINISTIC);
  MergeTuned<Perf>({Choice(1, 0, std::nullopt)}, kHeuristic, 5, std::nullopt,
                   out, 8);
  EXPECT_EQ(out[0].determinism, CUDNN_DETERMINISTIC);
  MergeTuned<Perf>({Choice(7, 0, std::nullopt)}, kHeuristic, 5, std::nullopt,
                   out, 8);
  EXPECT_EQ(out[0].determinism, CUDNN_NON_DETERMINISTIC);
}

TEST(PerfMergeTest, TheCallersCapacityIsNeverExceeded) {
  Perf out[2];
  const int n = MergeTuned<Perf>({Choice(3, 0, false), Choice(0, 0, true)},
                                 kHeuristic, 5, std::nullopt, out, 2);
  EXPECT_EQ(Algos(out, n), (std::vector<int>{3, 0}));
  EXPECT_EQ(MergeTuned<Perf>({Choice(3, 0, false)}, kHeuristic, 5, std::nullopt,
                             out, 0),
            0);
}

}  // namespace
}  // namespace tunedb::preload
