#include "server/search/screen.h"

#include <algorithm>

#include "common/status_macros.h"
#include "server/search/algo_failure.h"
#include "server/search/run_timer.h"

namespace tunedb {
namespace {

// The best of two batched samples of r, or why a run failed.
absl::StatusOr<double> ScreenOne(Sampler& sampler,
                                 const CudnnFinderOptions& options,
                                 const AlgoResult& r) {
  RETURN_IF_ERROR(sampler.Run(r));
  ASSIGN_OR_RETURN(const double one, sampler.TimeDirect(r, 1));
  const int batch = SampleBatch(one, options.sample_ms, options.max_batch);
  ASSIGN_OR_RETURN(double best, sampler.Sample(r, batch));
  ASSIGN_OR_RETURN(const double second, sampler.Sample(r, batch));
  return std::min(best, second);
}

}  // namespace

absl::Status Screen(Sampler& sampler, const CudnnFinderOptions& options,
                    absl::Time deadline, std::vector<AlgoResult>& results) {
  for (AlgoResult& r : results) {
    if (r.status != AlgoStatus::kOk) continue;
    if (absl::Now() >= deadline) break;
    absl::StatusOr<double> best = ScreenOne(sampler, options, r);
    if (!best.ok()) {
      RETURN_IF_ERROR(MarkFailed(r, best.status()));
      continue;
    }
    r.median_ms = *best;
    r.spread_ms = 0;
    r.samples = 1;
    r.retimed = true;
  }
  SortResults(results);
  return absl::OkStatus();
}

}  // namespace tunedb
