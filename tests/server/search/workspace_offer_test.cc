// The default workspace cap of a cuDNN search and what a legacy search offers
// within a cap (workspace_offer.h). The needs themselves come from cuDNN:
// the GPU finder test checks a small problem's offer.
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

TEST(WorkspaceOfferTest, IsTheLargestNeedWithinTheCap) {
  // The 3-D U-Net layer whose fastest algorithm needs 5.4 GiB.
  EXPECT_EQ(WorkspaceOffer(5754099415, 16 * kGiB), 5754099415);
  EXPECT_EQ(WorkspaceOffer(5754099415, 4 * kGiB), 4 * kGiB);
}

TEST(WorkspaceOfferTest, IsAtLeast1GiBWhereTheCapAllows) {
  EXPECT_EQ(WorkspaceOffer(0, 16 * kGiB), kGiB);
  EXPECT_EQ(WorkspaceOffer(int64_t{300} << 20, 16 * kGiB), kGiB);
  EXPECT_EQ(WorkspaceOffer(0, int64_t{256} << 20), int64_t{256} << 20);
  EXPECT_EQ(WorkspaceOffer(kGiB, 0), 0);
}

}  // namespace
}  // namespace tunedb
