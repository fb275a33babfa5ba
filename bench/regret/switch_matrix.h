// SwitchMatrix: what one direct cuDNN call of a candidate costs right after
// another candidate's calls, for every ordered pair of a problem's fastest
// candidates, against the steady cost of its back-to-back calls. It shows
// how much of a sample's time is the switch (the first call after another
// algorithm's) and whether that depends on the algorithm switched from.
//
// Samples are the search's own direct samples (TimeDirectRuns, run_timer.h:
// from an idle GPU, between two events, host cost included). Each cell:
// `prime_runs` calls of the predecessor, then one call of the candidate
// sampled at the switch; each steady cost: a batch of about
// `steady_sample_ms` after one untimed call. The cells are taken in a new
// random order in each of `reps` repetitions; a cell is the median. Then, for
// every member, the host time of each of `run_calls` back-to-back calls after a
// switch, and of each of its calls when they alternate with another member's:
// how a call's host cost changes as the same call repeats.
//
// Thread safety: none; one thread, on the conv's stream.
#ifndef TUNEDB_BENCH_REGRET_SWITCH_MATRIX_H_
#define TUNEDB_BENCH_REGRET_SWITCH_MATRIX_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/regret/problem_measurement.h"
#include "bench/regret/workspace.h"
#include "cudnn/cudnn_conv.h"

namespace tunedb::regret {

struct SwitchOptions {
  int candidates = 0;  // the fastest this many timed candidates; 0: none
  int reps = 9;        // repetitions of every cell
  int prime_runs = 3;  // predecessor calls before the timed one
  double steady_sample_ms = 1.0;  // a steady sample's batch lasts about this
  int run_calls = 48;  // calls of a member timed one by one after a switch
  uint64_t seed = 20261201;  // the cells' order
};

// Measures o.candidates of `m.candidates` (the fastest by the truth's
// median; each must be timed) into m.switch_matrix. Errors: only the fatal
// one of a broken CUDA context; a candidate that fails leaves the matrix
// empty.
absl::Status MeasureSwitchMatrix(CudnnConv& conv, cudaStream_t stream,
                                 const Workspace& workspace,
                                 const SwitchOptions& options,
                                 ProblemMeasurement& m);

}  // namespace tunedb::regret

#endif  // TUNEDB_BENCH_REGRET_SWITCH_MATRIX_H_
