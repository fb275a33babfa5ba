// How much workspace a cuDNN search offers its algorithms: the default cap
// (a share of free device memory), what a legacy search offers within a cap
// (what the problem's most demanding algorithm asks for), and how much a
// finder keeps between searches. The search (cudnn_finder.cc) and the regret
// harness's preloading Find (bench/regret/picks.cc) both use it.
//
// Thread safety: the functions are reentrant; LargestWorkspaceNeed and
// LegacyWorkspaceOffer use the conv (one thread at a time on it).
#ifndef TUNEDB_SERVER_SEARCH_WORKSPACE_OFFER_H_
#define TUNEDB_SERVER_SEARCH_WORKSPACE_OFFER_H_

#include <cstdint>

#include "cudnn/cudnn_conv.h"
#include "tunedb/problem.h"

namespace tunedb {

// The workspace a finder keeps from search to search; a larger one is given
// back after the search that needed it, so that a worker does not hold it.
// Also the graph API's default cap: its plans say what they need only once
// built.
inline constexpr int64_t kMaxKeptWorkspace = int64_t{4} << 30;

// The cap of a search whose request sets none: a quarter of `free_bytes`, at
// most 16 GiB for the legacy API (some algorithms need more than 4 GiB and
// are much faster for it: docs/gpu.md) and kMaxKeptWorkspace for the graph
// API. Bytes.
int64_t DefaultWorkspaceCap(int64_t free_bytes, ConvApi api);

// The most workspace any algorithm of conv's problem asks for
// (cudnnGet*WorkspaceSize) under the math types searched and default math;
// 0 where none says.
int64_t LargestWorkspaceNeed(CudnnConv& conv);

// What a legacy search offers within `cap` where the problem's most
// demanding algorithm asks for `largest_need`: that need, but at least
// 1 GiB (Find is not known to ask for more than cudnnGet*WorkspaceSize
// reports, and the margin costs nothing kept), and at most `cap`, so that
// Find tries every algorithm the cap allows.
int64_t WorkspaceOffer(int64_t largest_need, int64_t cap);
// The same for conv's problem (LargestWorkspaceNeed).
int64_t LegacyWorkspaceOffer(CudnnConv& conv, int64_t cap);

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SEARCH_WORKSPACE_OFFER_H_
