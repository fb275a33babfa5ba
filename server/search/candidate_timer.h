// CandidateTimer: what screening and re-timing (screen.h, retime.h) time
// candidates with — direct launches (launch and host time) and CUDA-graph
// replays (GPU time). Sampler is the one on the GPU; tests give the search
// phases a timer whose costs they know.
//
// Thread safety: none required of implementations; one search at a time.
#ifndef TUNEDB_SERVER_SEARCH_CANDIDATE_TIMER_H_
#define TUNEDB_SERVER_SEARCH_CANDIDATE_TIMER_H_

#include <optional>

#include "absl/status/statusor.h"
#include "server/search/conv_launcher.h"
#include "server/search/run_timer.h"
#include "tunedb/record.h"

namespace tunedb {

class CandidateTimer {
 public:
  virtual ~CandidateTimer() = default;
  // `batch` runs of r launched directly, starting as `from` says
  // (run_timer.h): launch and host time per run.
  virtual absl::StatusOr<DirectSample> TimeDirect(const AlgoResult& r,
                                                  int batch,
                                                  DirectStart from) = 0;
  // One sample of GPU time (a replay of `batch` runs captured on first use),
  // ms per run.
  virtual absl::StatusOr<double> Sample(const AlgoResult& r, int batch) = 0;
  // The candidate whose runs this timer started last (direct or replayed);
  // none before the first.
  virtual std::optional<CandidateKey> LastRun() const = 0;
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SEARCH_CANDIDATE_TIMER_H_
