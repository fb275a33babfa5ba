#include "common/version_text.h"

#include <gtest/gtest.h>

#include <vector>

#include "tunedb/problem.h"

namespace tunedb {
namespace {

TEST(VersionNumbersTest, ReadsTheWantedCount) {
  EXPECT_EQ(VersionNumbers("9.0", 2).value(), (std::vector<int>{9, 0}));
  EXPECT_EQ(VersionNumbers("9.19.1", 3).value(),
            (std::vector<int>{9, 19, 1}));
}

TEST(VersionNumbersTest, NamesWhatIsWrong) {
  EXPECT_EQ(VersionNumbers("9.x", 2).status().message(),
            "'9.x' is not a version");
  EXPECT_EQ(VersionNumbers("9.-1", 2).status().message(),
            "'9.-1' is not a version");
  EXPECT_EQ(VersionNumbers("9..0", 3).status().message(),
            "'9..0' is not a version");
  EXPECT_EQ(VersionNumbers("9.19", 3).status().message(),
            "'9.19' needs 3 dot-separated numbers");
}

TEST(CudnnVersionNumberTest, EncodesAndBoundsTheParts) {
  EXPECT_EQ(CudnnVersionNumber(9, 19, 0).value(), 91900);
  EXPECT_EQ(CudnnVersionNumber(8, 9, 7).value(), 80907);
  EXPECT_EQ(CudnnVersionNumber(9, 100, 0).status().message(),
            "minor and patch must be below 100");
  EXPECT_EQ(CudnnVersionNumber(9, 0, 100).status().message(),
            "minor and patch must be below 100");
  EXPECT_EQ(CudnnVersionNumber(300000, 0, 0).status().message(),
            "out of range");
}

TEST(ParseCudnnVersionTest, IsTheInverseOfTheText) {
  for (int v : {90000, 91900, 80907, 99999}) {
    EXPECT_EQ(ParseCudnnVersion(CudnnVersionText(v)).value(), v);
  }
  EXPECT_FALSE(ParseCudnnVersion("9.19").ok());
  EXPECT_FALSE(ParseCudnnVersion("9.19.0.1").ok());
  EXPECT_FALSE(ParseCudnnVersion("").ok());
}

}  // namespace
}  // namespace tunedb
