// The truth of a regret run: every candidate re-timed together on one
// CudnnConv, independently of the finder. The GPU is first kept busy with
// back-to-back runs of the candidates for `warmup_ms` (so its clocks ramp
// up); then each candidate gets a BatchTimer (batch sized to last at least
// `min_sample_ms`); then `rounds` interleaved rounds take one sample of every
// candidate, in an order that changes from round to round (TruthOrder). A
// candidate's time is the median of its samples. A candidate that fails to run
// gets its error and no time; the others go on.
//
// Thread safety: none; one thread, on the conv's stream.
#ifndef TUNEDB_BENCH_REGRET_TRUTH_TIMER_H_
#define TUNEDB_BENCH_REGRET_TRUTH_TIMER_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "bench/regret/batch_timer.h"
#include "bench/regret/problem_measurement.h"
#include "bench/regret/workspace.h"
#include "cudnn/cudnn_conv.h"

namespace tunedb::regret {

// How the order of a round's candidates changes from round to round. A
// direct sample's first call is the first after the previous candidate's,
// and what it costs depends on that candidate (switch_matrix.h).
enum class TruthOrder {
  // The same cycle, started one candidate later each round: every candidate
  // but the round's first follows the same neighbour in every round.
  kRotating,
  // A new random permutation each round (seeded: runs repeat): every
  // candidate follows a mix of the others.
  kShuffled,
};

// "rotating" or "shuffled".
absl::string_view TruthOrderName(TruthOrder order);

struct TruthOptions {
  int rounds = 15;
  TruthOrder order = TruthOrder::kShuffled;
  uint64_t order_seed = 20261201;  // kShuffled's permutations
  double warmup_ms = 300;
  BatchTimer::Options batch;
};

// Times `candidates` (each with algo, math and workspace_bytes set; the
// workspace must hold the largest) and fills batch, graphed, samples_ms,
// median_ms or error. Errors: only the fatal one of a broken CUDA context.
absl::Status TimeCandidates(CudnnConv& conv, cudaStream_t stream,
                            const Workspace& workspace,
                            const TruthOptions& options,
                            std::vector<TimedCandidate>& candidates);

}  // namespace tunedb::regret

#endif  // TUNEDB_BENCH_REGRET_TRUTH_TIMER_H_
