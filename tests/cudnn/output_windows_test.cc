// OutputWindows/TakeWindows: which output elements verification compares.
#include "cudnn/output_windows.h"

#include <numeric>
#include <vector>

#include "gtest/gtest.h"

namespace tunedb {
namespace {

TEST(OutputWindowsTest, SmallOutputIsComparedWhole) {
  EXPECT_EQ(OutputWindows(1000, 4096), (std::vector<OutputWindow>{{0, 1000}}));
  EXPECT_EQ(OutputWindows(4096, 4096), (std::vector<OutputWindow>{{0, 4096}}));
}

TEST(OutputWindowsTest, NoLimitMeansTheWholeOutput) {
  EXPECT_EQ(OutputWindows(1 << 30, 0),
            (std::vector<OutputWindow>{{0, 1 << 30}}));
}

TEST(OutputWindowsTest, EmptyOutputHasNoWindows) {
  EXPECT_TRUE(OutputWindows(0, 100).empty());
}

TEST(OutputWindowsTest, LargeOutputGetsSpacedWindowsCoveringBothEnds) {
  const int64_t total = 25'690'112;  // n32 k64 112x112
  const int64_t max = int64_t{1} << 20;
  const std::vector<OutputWindow> w = OutputWindows(total, max);
  ASSERT_EQ(static_cast<int>(w.size()), kOutputWindowCount);
  int64_t sum = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    EXPECT_EQ(w[i].count, max / kOutputWindowCount);
    if (i > 0) {
      EXPECT_GE(w[i].offset, w[i - 1].offset + w[i - 1].count);
    }
    sum += w[i].count;
  }
  EXPECT_EQ(w.front().offset, 0);
  int64_t stride = 0;
  ASSERT_TRUE(EvenlyStrided(w, &stride));
  EXPECT_LE(w.back().offset + w.back().count, total);
  EXPECT_GT(w.back().offset + w.back().count, total - stride);
  EXPECT_LE(sum, max);
}

TEST(OutputWindowsTest, WindowsNeverOverlapJustAboveTheLimit) {
  for (int64_t total = 641; total < 1400; ++total) {
    const std::vector<OutputWindow> w = OutputWindows(total, 640);
    for (size_t i = 1; i < w.size(); ++i) {
      ASSERT_GE(w[i].offset, w[i - 1].offset + w[i - 1].count) << total;
    }
    ASSERT_LE(w.back().offset + w.back().count, total);
  }
}

TEST(OutputWindowsTest, EvenlyStridedTellsUnevenWindowsApart) {
  int64_t stride = -1;
  EXPECT_TRUE(EvenlyStrided({{0, 2}, {5, 2}, {10, 2}}, &stride));
  EXPECT_EQ(stride, 5);
  EXPECT_TRUE(EvenlyStrided({{0, 7}}, &stride));
  EXPECT_EQ(stride, 0);
  EXPECT_FALSE(EvenlyStrided({{0, 2}, {5, 2}, {11, 2}}, &stride));
  EXPECT_FALSE(EvenlyStrided({{0, 2}, {5, 3}}, &stride));
  EXPECT_FALSE(EvenlyStrided({}, &stride));
}

TEST(OutputWindowsTest, TakeWindowsKeepsTheWindowedElementsInOrder) {
  std::vector<float> all(10);
  std::iota(all.begin(), all.end(), 0.0f);
  EXPECT_EQ(TakeWindows(all, {{1, 2}, {6, 3}}),
            (std::vector<float>{1, 2, 6, 7, 8}));
  EXPECT_EQ(TakeWindows(all, OutputWindows(10, 100)), all);
}

}  // namespace
}  // namespace tunedb
