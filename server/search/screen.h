// Phase 2 of a cuDNN search: screening. Find times each algorithm with one
// call, so its order is right about what is clearly slower but not among
// near-ties (and not for an algorithm whose first call pays for loading its
// kernels lazily, or precomputing indices). Find's order is trusted only that
// far: every OK candidate whose Find time is within options.screen_ratio of
// Find's fastest (at most options.max_screened, fastest first, while the
// budget allows: SearchBudget::MayScreen) is timed again with one batch of
// direct launches after one untimed run (TimeDirectRuns), the batch sized from
// its Find time to last about options.screen_sample_ms (SampleBatch, at most
// options.max_batch runs). That sample becomes its launch time, with its host
// time (samples = 1, spread 0, retimed = true); so is cuDNN's first choice
// (FirstChoiceOf), whatever its Find time or the budget, since Choose weighs
// the leader against it. The others keep Find's sample.
// Screening launches directly, as the callers that rank by launch time do;
// GPU time (CUDA-graph replays) is measured for the leaders only, in
// re-timing. A candidate that fails is marked kFailed. The results end
// sorted.
//
// Thread safety: none; one search at a time.
#ifndef TUNEDB_SERVER_SEARCH_SCREEN_H_
#define TUNEDB_SERVER_SEARCH_SCREEN_H_

#include <vector>

#include "absl/status/status.h"
#include "server/search/candidate_timer.h"
#include "server/search/cudnn_finder_options.h"
#include "server/search/search_budget.h"
#include "tunedb/record.h"

namespace tunedb {

// Screens `results` (sorted candidates). Errors: only the fatal one of a
// broken CUDA context.
absl::Status Screen(CandidateTimer& timer, const CudnnFinderOptions& options,
                    const SearchBudget& budget,
                    std::vector<AlgoResult>& results);

// Whether a candidate whose Find time is `find_ms` is screened when Find's
// fastest took `best_ms` (within options.screen_ratio).
bool WorthScreening(double find_ms, double best_ms,
                    const CudnnFinderOptions& options);

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SEARCH_SCREEN_H_
