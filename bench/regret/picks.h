// The three picks a regret run compares, each measured the way its user gets
// it, and the candidates the truth re-times:
//   - tunedb: CudnnFinder::Search with default SearchOptions (its own handle,
//     stream and buffers, as a tunedb-worker runs it), then
//     Choose(record, {.launch_mode = the truth's launch mode}), as the daemon
//     answers a caller without limits that launches that way;
//   - cudnnFind: cudnnFind*AlgorithmEx once per math type the problem's
//     policy allows (SearchMathTypes), offering the workspace cap the tunedb
//     search used; per call the first OK entry, and of those the one cuDNN
//     timed fastest, run under the math type the call was made with;
//   - heuristic: as tunedb's client falls back
//   (include/tunedb/cudnn_helpers.h):
//     cudnnGet*Algorithm_v7 on fresh descriptors with the policy's math type;
//     the first entry cuDNN reports OK that then runs, under the math type the
//     heuristic reports.
//
// Each records its pick (or why there is none) in a ProblemMeasurement.
// Errors returned are fatal only (a broken CUDA context); anything else is
// recorded on the measurement.
//
// Thread safety: none; one thread, one problem at a time.
#ifndef TUNEDB_BENCH_REGRET_PICKS_H_
#define TUNEDB_BENCH_REGRET_PICKS_H_

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <vector>

#include "absl/status/status.h"
#include "bench/regret/problem_measurement.h"
#include "bench/regret/workspace.h"
#include "cudnn/cudnn_conv.h"
#include "server/search/cudnn_finder.h"

namespace tunedb::regret {

// Fills the tunedb pick, search_s, ranking, workspace_cap_bytes and verified;
// sets m.error if the search failed.
absl::Status MeasureTunedb(CudnnFinder& finder, LaunchMode mode,
                           ProblemMeasurement& m);

// Runs cudnnFind once per math type on fresh buffers and the workspace the
// finder's search offers by default (workspace_offer.h), before anything
// else measures the problem, so that its kernels are loaded (lazily, once
// per process); fills find_cold_s with its wall time. A problem it cannot
// set up is left to the later steps.
// Errors: only the fatal one of a broken CUDA context.
absl::Status PreloadFind(cudnnHandle_t handle, cudaStream_t stream,
                         uint64_t seed, ProblemMeasurement& m);

// Fills the cudnnFind pick, find_runs and find_s. `workspace` is reserved to
// m.workspace_cap_bytes and exactly that much is offered.
absl::Status MeasureFind(CudnnConv& conv, Workspace& workspace,
                         ProblemMeasurement& m);

// Fills the heuristic pick and heuristic_entries; trial runs use `workspace`
// (grown as an entry needs).
absl::Status MeasureHeuristic(CudnnConv& conv, cudnnHandle_t handle,
                              cudaStream_t stream, Workspace& workspace,
                              ProblemMeasurement& m);

// Every (algorithm, math type) found OK by the picks above: the tunedb
// ranking's OK results, every OK entry of the cudnnFind calls and the
// heuristic's pick, each once, with the largest workspace any of them
// reported for it (and at least what cuDNN's workspace query says).
std::vector<TimedCandidate> CollectCandidates(CudnnConv& conv,
                                              const ProblemMeasurement& m);

}  // namespace tunedb::regret

#endif  // TUNEDB_BENCH_REGRET_PICKS_H_
