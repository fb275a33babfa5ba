#include "server/search/screen.h"

#include <algorithm>

#include "absl/time/time.h"
#include "common/record_results.h"
#include "common/status_macros.h"
#include "server/search/algo_failure.h"
#include "server/search/run_timer.h"

namespace tunedb {

bool WorthScreening(double find_ms, double best_ms,
                    const CudnnFinderOptions& options) {
  return find_ms <= best_ms * options.screen_ratio;
}

namespace {

// One batch of direct launches of `r` after an untimed run, sized from its
// Find time; it becomes r's launch and host time. Only a broken CUDA
// context's error is returned.
absl::Status ScreenOne(CandidateTimer& timer, const CudnnFinderOptions& options,
                       AlgoResult& r) {
  const int batch = SampleBatch(r.launch.median_ms, options.screen_sample_ms,
                                options.max_batch);
  absl::StatusOr<DirectSample> sample =
      timer.TimeDirect(r, batch, DirectStart::kAfterUntimedRun);
  if (!sample.ok()) return MarkFailed(r, sample.status());
  r.launch = {sample->launch_ms, 0, 1};
  r.host = {sample->host_ms, 0, 1};
  r.retimed = true;
  return absl::OkStatus();
}

}  // namespace

absl::Status Screen(CandidateTimer& timer, const CudnnFinderOptions& options,
                    const SearchBudget& budget,
                    std::vector<AlgoResult>& results) {
  if (results.empty() || results.front().status != AlgoStatus::kOk) {
    return absl::OkStatus();
  }
  const double best_ms = results.front().launch.median_ms;
  int screened = 0;
  absl::Duration longest = absl::ZeroDuration();  // of one screening so far
  for (AlgoResult& r : results) {
    if (r.status != AlgoStatus::kOk) continue;
    if (screened >= options.max_screened) break;
    if (!WorthScreening(r.launch.median_ms, best_ms, options)) break;
    const int batch = SampleBatch(r.launch.median_ms, options.screen_sample_ms,
                                  options.max_batch);
    // Its expected cost: as long as the longest so far, or its batch and
    // the untimed run before it at its Find time where that is longer. The
    // first two always: re-timing needs two screened members to compare.
    const absl::Duration expected =
        std::max(longest, absl::Milliseconds((batch + 1) * r.launch.median_ms));
    if (!budget.MayScreen(screened, expected)) break;
    ++screened;
    const absl::Time start = budget.Now();
    RETURN_IF_ERROR(ScreenOne(timer, options, r));
    longest = std::max(longest, budget.Now() - start);
  }
  // cuDNN's first choice, whatever its Find time (its first call may have
  // loaded its kernels).
  if (AlgoResult* first = FirstChoiceOf(results);
      first != nullptr && !first->retimed) {
    RETURN_IF_ERROR(ScreenOne(timer, options, *first));
  }
  SortResults(results);
  return absl::OkStatus();
}

}  // namespace tunedb
