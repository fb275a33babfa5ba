// The shared test values are what the suites take them for: valid, and the
// stem key has the canonical text the store and key suites compare against.
#include "tests/testing/test_values.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/record_results.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_dir.h"

namespace tunedb::testing_util {
namespace {

TEST(TestValuesTest, EveryBuilderMakesAValidValue) {
  EXPECT_TRUE(TestDevice().Validate().ok());
  EXPECT_TRUE(TestProblem(1).Validate().ok());
  EXPECT_TRUE(TestProblem(32, 32, 32, 112, 3, 1, 32).Validate().ok());
  EXPECT_TRUE(TestProblem(8, 512, 512, 14, 5, 1).Validate().ok());
  EXPECT_TRUE(StemProblem(64, ConvOp::kBackwardFilter).Validate().ok());
  EXPECT_TRUE(TestKey(8).Validate().ok());
  EXPECT_TRUE(StemKey(3, "GPU B", ConvOp::kBackwardData).Validate().ok());
  EXPECT_TRUE(TestRecord(1).key.Validate().ok());
  EXPECT_TRUE(TestRecord(1).supported());
  EXPECT_FALSE(NegativeRecord(1).supported());
}

TEST(TestValuesTest, StemKeyHasTheCanonicalText) {
  EXPECT_EQ(StemKey(64).ToText(),
            "kv=1 gpu=Simulated%20GPU cc=9.0 sms=132 cudnn=9.19.0 cuda=13.0 "
            "op=fwd n=64 c=3 k=64 in=224x224 filt=7x7 pad=3x3 stride=2x2 "
            "dil=1x1 groups=1 mode=xcorr in_type=f32 out_type=f32 compute=f32 "
            "layout=nchw tc=1 tf32=1");
}

TEST(TestValuesTest, TestKeyIsTheSmallProblemOnTheTestDevice) {
  EXPECT_EQ(TestKey(8, 16, 32).ToText(),
            "kv=1 gpu=Simulated%20GPU cc=9.0 sms=132 cudnn=9.19.0 cuda=13.0 "
            "op=fwd n=8 c=16 k=32 in=28x28 filt=3x3 pad=1x1 stride=1x1 "
            "dil=1x1 groups=1 mode=xcorr in_type=f32 out_type=f32 compute=f32 "
            "layout=nchw tc=1 tf32=1");
}

TEST(TestValuesTest, RecordRankingIsSortedAndFasterForSmallerBatches) {
  Record record = TestRecord(4);
  std::vector<AlgoResult> sorted = record.results;
  SortResults(sorted);
  EXPECT_EQ(sorted, record.results);
  EXPECT_LT(TestRecord(1).results[0].launch.median_ms,
            TestRecord(2).results[0].launch.median_ms);
}

TEST(TempDirTest, IsAFreshFolderUnderTmpRemovedAfterwards) {
  std::string path;
  {
    TempDir dir;
    path = dir.path();
    ASSERT_EQ(path.rfind("/tmp/", 0), 0u) << path;
    EXPECT_TRUE(std::filesystem::is_directory(path));
    EXPECT_TRUE(std::filesystem::is_empty(path));
    EXPECT_EQ(dir.File("a.db"), path + "/a.db");
    std::ofstream(dir.File("a.db")) << "x";
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace tunedb::testing_util
