#include "server/search/screen.h"

#include <algorithm>

#include "common/status_macros.h"
#include "server/search/algo_failure.h"
#include "server/search/run_timer.h"

namespace tunedb {
namespace {

// The better of two batched direct samples of r, or why a run failed.
absl::StatusOr<DirectSample> ScreenOne(Sampler& sampler,
                                       const CudnnFinderOptions& options,
                                       const AlgoResult& r) {
  RETURN_IF_ERROR(sampler.Run(r));
  ASSIGN_OR_RETURN(const DirectSample one, sampler.TimeDirect(r, 1));
  const int batch =
      SampleBatch(one.launch_ms, options.sample_ms, options.max_batch);
  ASSIGN_OR_RETURN(const DirectSample first, sampler.TimeDirect(r, batch));
  ASSIGN_OR_RETURN(const DirectSample second, sampler.TimeDirect(r, batch));
  return first.launch_ms <= second.launch_ms ? first : second;
}

}  // namespace

absl::Status Screen(Sampler& sampler, const CudnnFinderOptions& options,
                    absl::Time deadline, std::vector<AlgoResult>& results) {
  // Find's leader keeps the GPU busy first, so that screening does not time
  // the first candidates on a GPU still clocked down from idle.
  if (!results.empty() && results.front().status == AlgoStatus::kOk) {
    RETURN_IF_ERROR(sampler.WarmUp({&results.front()}, options.warmup));
  }
  for (AlgoResult& r : results) {
    if (r.status != AlgoStatus::kOk) continue;
    if (absl::Now() >= deadline) break;
    absl::StatusOr<DirectSample> best = ScreenOne(sampler, options, r);
    if (!best.ok()) {
      RETURN_IF_ERROR(MarkFailed(r, best.status()));
      continue;
    }
    r.launch = {best->launch_ms, 0, 1};
    r.host = {best->host_ms, 0, 1};
    r.retimed = true;
  }
  SortResults(results);
  return absl::OkStatus();
}

}  // namespace tunedb
