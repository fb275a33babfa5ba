// The simulated finder is a test double, but tests rely on its model having
// the properties of a real GPU's ranking; these check them.
#include "server/finder/simulated_finder.h"

#include <set>

#include "gtest/gtest.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

using testing_util::TestProblem;

TEST(SimulatedFinderTest, DifferentShapesHaveDifferentWinners) {
  std::set<int> winners;
  for (const ConvProblem& p :
       {TestProblem(64, 3, 64, 224, 7, 2), TestProblem(64, 64, 64, 56, 3, 1),
        TestProblem(64, 256, 512, 28, 1, 2), TestProblem(8, 512, 512, 14, 5, 1),
        TestProblem(32, 32, 32, 112, 3, 1, 32)}) {
    auto results = SimulatedFinder::Model(p);
    ASSERT_FALSE(results.empty());
    ASSERT_EQ(results[0].status, AlgoStatus::kOk);
    winners.insert(results[0].algo);
  }
  EXPECT_GE(winners.size(), 2u);
}

TEST(SimulatedFinderTest, ModelHasWorkspaceNondeterminismAndUnsupported) {
  auto results = SimulatedFinder::Model(TestProblem(64, 64, 64, 56, 3, 2));
  bool workspace = false, nondet = false, unsupported = false;
  for (const auto& r : results) {
    workspace |= r.workspace_bytes > 0;
    nondet |= r.status == AlgoStatus::kOk && !r.deterministic;
    unsupported |= r.status == AlgoStatus::kNotSupported;
  }
  EXPECT_TRUE(workspace);
  EXPECT_TRUE(nondet);
  EXPECT_TRUE(unsupported);  // FFT-like algorithms need stride 1
}

TEST(SimulatedFinderTest, HugeProblemIsSupportedByNone) {
  ConvProblem p = TestProblem(1 << 20, 1 << 11, 1 << 10, 1, 1, 1);
  ASSERT_TRUE(p.Validate().ok()) << p.Validate();
  auto results = SimulatedFinder::Model(p);
  for (const auto& r : results) EXPECT_NE(r.status, AlgoStatus::kOk);
}

TEST(SimulatedFinderTest, DeterministicAcrossCalls) {
  ConvProblem p = TestProblem(16, 64, 128, 28, 3, 1);
  EXPECT_EQ(SimulatedFinder::Model(p), SimulatedFinder::Model(p));
}

TEST(SimulatedFinderTest, FaultSwitchesAndOptions) {
  auto options =
      SimulatedFinder::Options::Parse("devices=2;fail_n=13;hang_n=14");
  ASSERT_TRUE(options.ok()) << options.status();
  SimulatedFinder finder(*options);
  auto devices = finder.Devices();
  ASSERT_TRUE(devices.ok());
  EXPECT_EQ(devices->size(), 2u);
  SearchOptions so;
  so.timeout = absl::Milliseconds(50);
  EXPECT_TRUE(finder.Search(0, TestProblem(8, 16, 16, 8, 3, 1), so).ok());
  EXPECT_EQ(
      finder.Search(1, TestProblem(13, 16, 16, 8, 3, 1), so).status().code(),
      absl::StatusCode::kInternal);
  EXPECT_EQ(
      finder.Search(0, TestProblem(14, 16, 16, 8, 3, 1), so).status().code(),
      absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(
      finder.Search(2, TestProblem(8, 16, 16, 8, 3, 1), so).status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(finder.searches(), 3);
  EXPECT_FALSE(SimulatedFinder::Options::Parse("devices=zero").ok());
  EXPECT_FALSE(SimulatedFinder::Options::Parse("colour=red").ok());
}

TEST(SimulatedFinderTest, WorkspaceCapFailsGreedyAlgorithms) {
  SimulatedFinder finder({});
  SearchOptions so;
  so.workspace_cap_bytes = 0;
  auto result = finder.Search(0, TestProblem(8, 64, 64, 32, 3, 1), so);
  ASSERT_TRUE(result.ok());
  for (const auto& r : result->results) {
    if (r.status == AlgoStatus::kOk) {
      EXPECT_EQ(r.workspace_bytes, 0);
    }
  }
}

}  // namespace
}  // namespace tunedb
