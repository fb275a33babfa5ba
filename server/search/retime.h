// Phase 3 of a cuDNN search: re-timing the leaders by launch time. The pool
// starts with the screened candidates within options.retime_margin of the
// best launch time, at least min_candidates and at most max_candidates.
// Rounds take, of every pool member in an order that rotates from round to
// round, one sample of direct launches (launch and host time) and, every
// other round, one of CUDA-graph replays (GPU time), until min_rounds have
// run and the leader is settled (every other member a near-tie within
// options.tie_margin or clearly slower), or max_rounds, or the deadline
// (two rounds always run). A screened candidate outside the pool within the
// margin of the re-timed leader then joins it and the rounds go on (at most
// four passes), so the result ranked first has the full samples.
//
// Re-timed results get launch, host and GPU time (median, spread = max - min,
// sample count) and retimed = true; a member that fails is marked kFailed.
// The results end sorted (by launch time).
//
// Thread safety: none; one search at a time.
#ifndef TUNEDB_SERVER_SEARCH_RETIME_H_
#define TUNEDB_SERVER_SEARCH_RETIME_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/search/cudnn_finder_options.h"
#include "server/search/sampler.h"
#include "tunedb/record.h"

namespace tunedb {

// Re-times the leaders of `results` (screened, sorted). Returns the most
// rounds any pass ran (SearchResult::repeats). Errors: the fatal one of a
// broken CUDA context, or a failed stream synchronisation.
absl::StatusOr<int> Retime(Sampler& sampler, const CudnnFinderOptions& options,
                           absl::Time deadline,
                           std::vector<AlgoResult>& results);

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SEARCH_RETIME_H_
