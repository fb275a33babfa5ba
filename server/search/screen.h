// Phase 2 of a cuDNN search: screening. Find's single sample is not trusted
// (CUDA loads kernels lazily, so it may include loading them: on an H200,
// Find timed implicit precomp GEMM up to 4x slower than it runs), so after
// Find's leader has kept the GPU busy for options.warmup, every OK
// candidate, fastest first, until the deadline:
//   - runs once untimed;
//   - is timed once with a direct launch, which sizes its sample batch
//     (SampleBatch: about options.sample_ms, at most options.max_batch runs);
//   - is timed with two batched samples of direct launches, the better of
//     which becomes its launch time, with its host time (samples = 1,
//     spread 0, retimed = true).
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
#include "absl/time/time.h"
#include "server/search/cudnn_finder_options.h"
#include "server/search/sampler.h"
#include "tunedb/record.h"

namespace tunedb {

// Screens `results` (sorted candidates). Errors: only the fatal one of a
// broken CUDA context.
absl::Status Screen(Sampler& sampler, const CudnnFinderOptions& options,
                    absl::Time deadline, std::vector<AlgoResult>& results);

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SEARCH_SCREEN_H_
