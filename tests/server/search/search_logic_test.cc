// The cuDNN search's decisions that need no GPU: which candidates are
// screened, when re-timing may stop, and what verification's windows see.
#include <cstdint>
#include <vector>

#include "cudnn/output_windows.h"
#include "gtest/gtest.h"
#include "server/search/cudnn_finder_options.h"
#include "server/search/sample_stats.h"
#include "server/search/screen.h"
#include "server/search/verify.h"
#include "tunedb/problem.h"

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

// An f32 NCHW output of 8 x 64 x 28 x 28 (a ResNet layer's at batch 8).
class VerifyWindowsTest : public ::testing::Test {
 protected:
  static constexpr int64_t kW = 28, kH = 28, kTotal = 8 * 64 * kH * kW;

  VerifyWindowsTest() : right_(kTotal) {
    uint32_t x = 12345;
    for (float& v : right_) {
      x = x * 1664525u + 1013904223u;
      v = static_cast<float>(x >> 8) / static_cast<float>(1 << 24) - 0.5f;
    }
    problem_.input_type = DataType::kFloat;
  }
  // The relative L2 difference verification sees between `output` and the
  // right one, through the default windows.
  double SeenError(const std::vector<float>& output) const {
    const std::vector<OutputWindow> windows =
        OutputWindows(kTotal, CudnnFinderOptions().verify_max_elements);
    return RelativeL2(TakeWindows(output, windows),
                      TakeWindows(right_, windows));
  }
  double Tolerance() const { return VerifyTolerance(problem_, MathType::kFma); }

  std::vector<float> right_;
  ConvProblem problem_;
};

TEST_F(VerifyWindowsTest, DefaultWindowsReadLessThanTheWholeOutput) {
  EXPECT_LT(CudnnFinderOptions().verify_max_elements, kTotal);
}

TEST_F(VerifyWindowsTest, AnErrorOnTheLastRowOfEveryTileIsSeen) {
  // 1 % off on every fourth row: a tile-edge bug.
  std::vector<float> wrong = right_;
  for (int64_t i = 0; i < kTotal; ++i) {
    if ((i / kW) % kH % 4 == 3) wrong[i] *= 1.01f;
  }
  EXPECT_GT(SeenError(wrong), Tolerance());
}

TEST_F(VerifyWindowsTest, AnOutputWrongAllOverIsSeen) {
  std::vector<float> wrong = right_;
  for (float& v : wrong) v = -v;
  EXPECT_GT(SeenError(wrong), Tolerance());
}

TEST_F(VerifyWindowsTest, RoundingDifferencesPass) {
  std::vector<float> close = right_;
  for (int64_t i = 0; i < kTotal; ++i) {
    close[i] *= 1.0f + 1e-5f * static_cast<float>(i % 3 - 1);
  }
  EXPECT_LE(SeenError(close), Tolerance());
}

}  // namespace
}  // namespace tunedb
