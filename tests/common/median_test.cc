#include "common/median.h"

#include <gtest/gtest.h>

namespace tunedb {
namespace {

TEST(MedianTest, NoneIsZero) { EXPECT_EQ(Median({}), 0); }

TEST(MedianTest, OddCountIsTheMiddleOne) {
  EXPECT_EQ(Median({3.0}), 3.0);
  EXPECT_EQ(Median({5.0, 1.0, 3.0}), 3.0);
}

TEST(MedianTest, EvenCountIsTheMeanOfTheMiddleTwo) {
  EXPECT_EQ(Median({4.0, 1.0}), 2.5);
  EXPECT_EQ(Median({1.0, 9.0, 2.0, 3.0}), 2.5);
}

}  // namespace
}  // namespace tunedb
