#include "server/tuning/search_again.h"

#include <algorithm>
#include <optional>

#include "common/caller_filters.h"
#include "common/config_identity.h"
#include "common/record_results.h"
#include "server/finder/finder.h"

namespace tunedb {

std::vector<AlgoResult> FarBehind(const Record& stored, double factor,
                                  int first_choices) {
  std::vector<AlgoResult> out;
  if (factor <= 1 || stored.key.problem.api != ConvApi::kGraph ||
      stored.timing_version < kCurrentTimingVersion) {
    return out;
  }
  const AlgoResult* fastest = nullptr;
  for (const AlgoResult& r : stored.results) {
    if (r.status != AlgoStatus::kOk) continue;
    if (fastest == nullptr || r.cost(LaunchMode::kDirect).median_ms <
                                  fastest->cost(LaunchMode::kDirect).median_ms) {
      fastest = &r;
    }
  }
  if (fastest == nullptr) return out;
  const double limit = fastest->cost(LaunchMode::kDirect).median_ms * factor;
  if (limit <= 0) return out;
  std::vector<AlgoResult> chosen;
  for (const CallerFilter& f : FrameworkFilters(stored.key.problem.input_type)) {
    if (std::optional<AlgoResult> c = Choose(stored, f.constraints)) {
      chosen.push_back(*std::move(c));
    }
  }
  for (const AlgoResult& r : stored.results) {
    if (r.status != AlgoStatus::kOk ||
        r.cost(LaunchMode::kDirect).median_ms < limit ||
        (r.heuristic_rank > 0 && r.heuristic_rank <= first_choices) ||
        ListsConfig(chosen, r)) {
      continue;
    }
    out.push_back(r);
  }
  return out;
}

void CarryFarBehind(const std::vector<AlgoResult>& far_behind,
                    int64_t workspace_cap_bytes,
                    std::vector<AlgoResult>& results) {
  const bool any_ok =
      std::any_of(results.begin(), results.end(), [](const AlgoResult& r) {
        return r.status == AlgoStatus::kOk;
      });
  if (!any_ok) return;
  const std::vector<AlgoResult> returned = results;
  for (const AlgoResult& r : far_behind) {
    if (ListsConfig(returned, r)) continue;
    if (workspace_cap_bytes >= 0 && r.workspace_bytes > workspace_cap_bytes) {
      continue;
    }
    results.push_back(r);
  }
  SortResults(results);
}

}  // namespace tunedb
