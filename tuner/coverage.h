// Coverage: which problems of a plan (models, shape files: ProblemPlan) have
// no tuned record for a device, and which of those the daemon would answer
// with a prediction (LookupRequest.predict) until a search is stored.
//
// CheckCoverage asks the daemon: Query by key hash for each problem (a
// Query does not count as serving the record, so coverage leaves the served
// counts that `tunedb report` reads as they were), then, for each problem
// not stored, one Lookup with predict (it counts in the daemon's lookup
// counters as a miss, or a prediction). The rest are pure functions that
// show the result as a table, JSON or CSV.
//
// Thread safety: CheckCoverage uses the context's stub from one thread; the
// rest are pure functions.
#ifndef TUNEDB_TUNER_COVERAGE_H_
#define TUNEDB_TUNER_COVERAGE_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tunedb/problem.h"
#include "tuner/cli_context.h"
#include "tuner/prewarm_runner.h"
#include "tuner/table.h"

namespace tunedb::tuner {

// The daemon's predicted answer for a problem never tuned.
struct PredictedAnswer {
  std::string config;  // AlgoLabel of the predicted result
  double confidence = 0;
  double distance = 0;  // 0: the same problem under another cuDNN version
};

// A problem of the plan with no tuned record.
struct CoverageGap {
  PrewarmItem item;
  std::optional<PredictedAnswer> predicted;  // nullopt: nothing to predict
};

struct CoverageResult {
  DeviceKey device;
  int64_t problems = 0;  // unique problems of the plan
  int64_t stored = 0;    // of them with a tuned record
  int64_t duplicates = 0;
  std::vector<CoverageGap> gaps;  // the rest, in plan order

  int64_t predicted() const;  // gaps with a predicted answer
  bool covered() const { return gaps.empty(); }
};

// The coverage of `items` (all for one device, `device`); `predict` also
// asks the daemon's prediction for each gap. An error only when the daemon
// cannot be used.
absl::StatusOr<CoverageResult> CheckCoverage(
    CliContext& ctx, const DeviceKey& device,
    const std::vector<PrewarmItem>& items, bool predict);

nlohmann::json CoverageToJson(const CoverageResult& r);
// The gaps as a table, then a summary line.
void PrintCoverage(const CoverageResult& r, std::ostream& out);
// One row per gap: source, key hash, op, shape, type, layout, predicted
// config and confidence, key text.
Table CoverageCsv(const CoverageResult& r);

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_COVERAGE_H_
