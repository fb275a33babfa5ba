// Phase 1 of a cuDNN search: the candidates. cudnnFind*AlgorithmEx runs once
// per math type the problem's policy allows, and every entry it reports
// becomes one AlgoResult per (algorithm, math type), the math type being the
// one the entry reports where the policy allows it (Find reports some
// algorithms twice in one call, under two math types), else the one asked
// for; of two reports of one pair the one that ran, else the faster, counts:
//   - ran: kOk with Find's time (samples = 1) and the larger of Find's memory
//     and cudnnGet*WorkspaceSize (Find can under-report);
//   - needs more workspace than offered: kFailed with its need;
//   - "not supported": kNotSupported; other failures kFailed with cuDNN's
//     error string;
//   - a math type under which cuDNN supports nothing: every algorithm
//     kNotSupported under it.
// Each result then gets its place in cuDNN's heuristic ranking
// (AlgoResult::heuristic_rank), from cudnnGet*Algorithm_v7 under the
// problem's own math type.
//
// Thread safety: none; one search at a time on the conv.
#ifndef TUNEDB_SERVER_SEARCH_CANDIDATES_H_
#define TUNEDB_SERVER_SEARCH_CANDIDATES_H_

#include <vector>

#include "absl/status/statusor.h"
#include "common/math_policy.h"  // SearchMathTypes
#include "cudnn/cudnn_conv.h"
#include "cudnn/cudnn_handles.h"
#include "server/finder/finder.h"  // SearchOptions
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

// The candidates of conv's problem with `workspace` offered (its size is the
// search's workspace cap), sorted by SortResults. Errors: Find's other than
// FAILED_PRECONDITION, and the fatal error if the CUDA context broke.
absl::StatusOr<std::vector<AlgoResult>> FindCandidates(CudnnConv& conv,
                                                       DeviceSpan workspace);

// A revalidation's candidates (search.retime_only): the listed (algorithm,
// math type) pairs that the problem's policy allows and cuDNN's first
// search.first_choices choices (cudnnGet*Algorithm_v7 under the problem's
// math type), each run
// once and timed as Find would (its first launch-time sample), without
// Find: an unsupported pair is kNotSupported, one needing more workspace
// than offered kFailed with its need. Determinism and heuristic ranks come
// from the heuristic's report. Sorted by SortResults.
absl::StatusOr<std::vector<AlgoResult>> ListedCandidates(
    CudnnConv& conv, cudaStream_t stream, DeviceSpan workspace,
    const SearchOptions& search);

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SEARCH_CANDIDATES_H_
