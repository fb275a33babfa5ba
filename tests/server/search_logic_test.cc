// The cuDNN search's decisions that need no GPU: which candidates are
// screened and when re-timing may stop.
#include <vector>

#include "gtest/gtest.h"
#include "server/search/cudnn_finder_options.h"
#include "server/search/sample_stats.h"
#include "server/search/screen.h"

namespace tunedb {
namespace {

TEST(SettledAgainstTest, NearTieIsSettledWhateverTheSamplesOverlap) {
  // Medians 1.00 and 1.015: within 2 %, either is as good a choice.
  EXPECT_TRUE(SettledAgainst({0.98, 1.00, 1.02}, {0.97, 1.015, 1.05}, 0.02));
}

TEST(SettledAgainstTest, ClearlySlowerRivalIsSettled) {
  // Every rival sample is above the leader's median.
  EXPECT_TRUE(SettledAgainst({0.99, 1.00, 1.01}, {1.05, 1.06, 1.30}, 0.02));
}

TEST(SettledAgainstTest, OverlappingRivalOutsideTheTieMarginIsNotSettled) {
  // Median 1.06 (6 % slower) but one sample faster than the leader's median.
  EXPECT_FALSE(SettledAgainst({0.99, 1.00, 1.01}, {0.98, 1.06, 1.10}, 0.02));
}

TEST(SettledAgainstTest, MissingSamplesCountAsSettled) {
  EXPECT_TRUE(SettledAgainst({}, {1.0}, 0.02));
  EXPECT_TRUE(SettledAgainst({1.0}, {}, 0.02));
}

TEST(WorthScreeningTest, CandidatesWithinTheScreenRatioOfFindsBestAreScreened) {
  CudnnFinderOptions options;
  options.screen_ratio = 3.0;
  EXPECT_TRUE(WorthScreening(0.1, 0.1, options));
  EXPECT_TRUE(WorthScreening(0.3, 0.1, options));
  EXPECT_FALSE(WorthScreening(0.31, 0.1, options));
}

}  // namespace
}  // namespace tunedb
