// Phase 4 of a cuDNN search: verification. The fastest result runs again and
// its output is compared with that of a reference algorithm run on the same
// inputs, and on a mismatch with a second one (the first may be the wrong
// one): the fastest OK result of another algorithm (cheap; two algorithms
// that agree are both right), implicit GEMM with FMA math, algorithm 1 with
// FMA math, implicit GEMM with default math, then the other OK results, in
// that order of preference (only those that fit the workspace and run, each
// run only when needed). When
// no other algorithm ran, the reference is the double-precision CPU computation
// (CudnnConv::CpuReference), for problems of at most cpu_reference_max_macs.
// The check is the relative L2 difference against VerifyTolerance, over at
// most verify_max_elements of the output (evenly spaced windows,
// output_windows.h: reading a whole large output back would cost more than
// the search's timing). A fastest
// result that disagrees is marked kFailed ("output differs from ...") and the
// next one is checked, three at most.
//
// Thread safety: none; one search at a time on the conv.
#ifndef TUNEDB_SERVER_SEARCH_VERIFY_H_
#define TUNEDB_SERVER_SEARCH_VERIFY_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "cudnn/cudnn_conv.h"
#include "cudnn/cudnn_handles.h"
#include "server/search/conv_launcher.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

// Relative L2 tolerance when comparing two algorithms' outputs for `problem`
// where the faster one ran with `math`: 1e-3 for f32 with FMA math, 1e-2 for
// TF32 and f16, 5e-2 for bf16, 1e-9 for f64.
double VerifyTolerance(const ConvProblem& problem, MathType math);

// Relative L2 difference ||a - b|| / max(||b||, tiny); +inf on size mismatch
// or non-finite values.
double RelativeL2(const std::vector<float>& a, const std::vector<float>& b);

// Verifies the fastest of `results` (sorted, re-timed) with `workspace`
// offered (its size is the search's workspace cap). Returns whether a choice
// matched a reference (SearchResult::verified); results it rejected are
// marked kFailed and the results re-sorted. Errors: the fatal one of a broken
// CUDA context, or a failed read of an output.
// Candidates run through `launcher`; the references are conv's legacy
// algorithms (for a graph-API problem, only those).
absl::StatusOr<bool> Verify(CudnnConv& conv, ConvLauncher& launcher,
                            DeviceSpan workspace,
                            int64_t verify_max_elements,
                            int64_t cpu_reference_max_macs,
                            std::vector<AlgoResult>& results);

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SEARCH_VERIFY_H_
