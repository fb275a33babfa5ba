// MeasureProblem: one problem of a regret run from start to end — tunedb's
// search (on the finder's own buffers, before anything of ours takes device
// memory, so its workspace cap is what a worker would offer), then on one
// CudnnConv of ours (descriptors and random buffers): cudnnFind's pick,
// the heuristic's pick, and the truth over every candidate (picks.h,
// truth_timer.h). Device memory is released before it returns.
//
// Thread safety: none; one problem at a time.
#ifndef TUNEDB_BENCH_REGRET_MEASURE_PROBLEM_H_
#define TUNEDB_BENCH_REGRET_MEASURE_PROBLEM_H_

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstdint>

#include "absl/status/status.h"
#include "bench/regret/problem_measurement.h"
#include "bench/regret/switch_matrix.h"
#include "bench/regret/truth_timer.h"
#include "server/search/cudnn_finder.h"

namespace tunedb::regret {

struct RegretContext {
  CudnnFinder* finder = nullptr;
  cudnnHandle_t handle = nullptr;  // ours, not the finder's
  cudaStream_t stream = nullptr;   // ours, not the finder's
  TruthOptions truth;
  uint64_t seed = CudnnFinder::Options().seed;  // the finder's input data
  // Run (and time, as find_cold_s) cudnnFind once before tunedb's search, so
  // that both the search and the timed Find after it find the problem's
  // kernels loaded: CUDA loads them lazily, once per process, and whichever
  // ran first would pay for it.
  bool preload_find = true;
  SwitchOptions switch_matrix;  // after the truth, where asked for
};

// Measures m.problem into m. A problem that cannot be measured gets m.error.
// Errors: only the fatal one of a broken CUDA context (the process must
// stop).
absl::Status MeasureProblem(const RegretContext& ctx, ProblemMeasurement& m);

}  // namespace tunedb::regret

#endif  // TUNEDB_BENCH_REGRET_MEASURE_PROBLEM_H_
