#include "server/search/workspace_offer.h"

#include <algorithm>
#include <vector>

#include "absl/status/statusor.h"
#include "server/search/candidates.h"

namespace tunedb {
namespace {

constexpr int64_t kMaxDefaultLegacyWorkspace = int64_t{16} << 30;
constexpr int64_t kMinOfferedWorkspace = int64_t{1} << 30;

}  // namespace

int64_t DefaultWorkspaceCap(int64_t free_bytes, ConvApi api) {
  return std::min(free_bytes / 4, api == ConvApi::kGraph
                                      ? kMaxKeptWorkspace
                                      : kMaxDefaultLegacyWorkspace);
}

int64_t LargestWorkspaceNeed(CudnnConv& conv) {
  std::vector<MathType> maths = SearchMathTypes(conv.problem());
  if (std::find(maths.begin(), maths.end(), MathType::kDefault) ==
      maths.end()) {
    maths.push_back(MathType::kDefault);
  }
  int64_t largest = 0;
  for (MathType math : maths) {
    for (int a = 0; a < conv.AlgoCount(); ++a) {
      absl::StatusOr<int64_t> need = conv.WorkspaceSize(a, math);
      if (need.ok()) largest = std::max(largest, *need);
    }
  }
  return largest;
}

int64_t WorkspaceOffer(int64_t largest_need, int64_t cap) {
  return std::min(cap, std::max(largest_need, kMinOfferedWorkspace));
}

int64_t LegacyWorkspaceOffer(CudnnConv& conv, int64_t cap) {
  return WorkspaceOffer(LargestWorkspaceNeed(conv), cap);
}

}  // namespace tunedb
