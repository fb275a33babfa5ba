// Phase 3 of a cuDNN search: re-timing the leaders by launch time. The pool
// starts with the screened candidates within options.retime_margin of the
// best launch time, at least min_candidates and at most max_candidates. After
// a warm-up (the GPU busy for options.warmup so its clocks ramp up), rounds
// take, of every pool member in an order that rotates from round to round,
// one sample of direct launches (launch and host time) and one of CUDA-graph
// replays (GPU time), until each has min_rounds samples and the leader (by
// median launch time) has held for stable_rounds, or max_rounds, or the
// deadline. A candidate outside the pool within the margin of the re-timed
// leader then joins it and the rounds go on (at most four passes), so the
// result ranked first has the full samples.
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
