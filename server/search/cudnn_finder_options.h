// CudnnFinderOptions: how a CudnnFinder searches — the device, the re-timing
// pool and rounds, the timed sample size and the verification limits. The
// search phases (screen.h, retime.h, verify.h) read it.
//
// Thread safety: a plain value type.
#ifndef TUNEDB_SERVER_SEARCH_CUDNN_FINDER_OPTIONS_H_
#define TUNEDB_SERVER_SEARCH_CUDNN_FINDER_OPTIONS_H_

#include <cstdint>

#include "absl/time/time.h"

namespace tunedb {

struct CudnnFinderOptions {
  int ordinal = 0;              // CUDA device ordinal
  double retime_margin = 0.15;  // candidates within this of the best
  int min_candidates = 2;
  int max_candidates = 6;
  int min_rounds = 10;
  int max_rounds = 50;
  int stable_rounds = 5;  // leader unchanged this many rounds
  absl::Duration warmup = absl::Milliseconds(50);
  // A timed sample is a batch of back-to-back runs lasting about this long
  // (at most max_batch runs): long enough that event overhead is noise, and
  // for direct launches what a caller issuing calls back to back waits for.
  double sample_ms = 1.0;
  int max_batch = 256;
  // Re-timing budget: min(this, search timeout / 4).
  absl::Duration retime_budget = absl::Seconds(3);
  uint64_t seed = 20260101;  // input data seed
  // Verification falls back to a CPU computation when no other algorithm
  // runs, for problems of at most this many multiply-accumulates.
  int64_t cpu_reference_max_macs = int64_t{1} << 29;
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SEARCH_CUDNN_FINDER_OPTIONS_H_
