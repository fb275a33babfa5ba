// The default workspace cap of a cuDNN search (workspace_offer.h). What a
// legacy search offers within it needs cuDNN's workspace sizes, so that part
// runs in the GPU finder test.
#include "server/search/workspace_offer.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace tunedb {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

TEST(DefaultWorkspaceCapTest, IsAQuarterOfFreeMemoryUpTo16GiBForTheLegacyApi) {
  EXPECT_EQ(DefaultWorkspaceCap(8 * kGiB, ConvApi::kLegacy), 2 * kGiB);
  EXPECT_EQ(DefaultWorkspaceCap(40 * kGiB, ConvApi::kLegacy), 10 * kGiB);
  EXPECT_EQ(DefaultWorkspaceCap(140 * kGiB, ConvApi::kLegacy), 16 * kGiB);
}

TEST(DefaultWorkspaceCapTest, IsAtMostWhatAFinderKeepsForTheGraphApi) {
  EXPECT_EQ(DefaultWorkspaceCap(8 * kGiB, ConvApi::kGraph), 2 * kGiB);
  EXPECT_EQ(DefaultWorkspaceCap(140 * kGiB, ConvApi::kGraph),
            kMaxKeptWorkspace);
  EXPECT_EQ(kMaxKeptWorkspace, 4 * kGiB);
}

TEST(DefaultWorkspaceCapTest, NoFreeMemoryIsNoWorkspace) {
  EXPECT_EQ(DefaultWorkspaceCap(0, ConvApi::kLegacy), 0);
  EXPECT_EQ(DefaultWorkspaceCap(3, ConvApi::kGraph), 0);
}

}  // namespace
}  // namespace tunedb
