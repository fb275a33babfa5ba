// GroupSummary: the regret of each pick over a group of problems — how many
// picks are more than 5 % and 10 % slower than the best candidate, the worst
// and the geometric-mean ratio — and what the searches cost, per (model set,
// pass, dtype, layout) and overall per (pass, dtype).
//
// Thread safety: pure functions.
#ifndef TUNEDB_BENCH_REGRET_GROUP_SUMMARY_H_
#define TUNEDB_BENCH_REGRET_GROUP_SUMMARY_H_

#include <array>
#include <string>
#include <vector>

#include "bench/regret/problem_measurement.h"

namespace tunedb::regret {

// A pick is "slower" when its ratio exceeds these.
inline constexpr double kOver5Pct = 1.05;
inline constexpr double kOver10Pct = 1.10;

// One pick's ratios over a group.
struct PickSummary {
  int ratios = 0;   // problems with a ratio
  int missing = 0;  // measured problems where the pick had none
  int over_5pct = 0;
  int over_10pct = 0;
  double worst = 0;    // largest ratio; 0 without ratios
  double geomean = 0;  // geometric mean; 0 without ratios
};

// Summarises ratios (each >= 1 by construction); `missing` stays 0.
PickSummary SummarizeRatios(const std::vector<double>& ratios);

struct GroupSummary {
  // "all" in the set and layout of the overall rows.
  std::string set, pass, dtype, layout;
  bool overall = false;
  int problems = 0;                  // in the group
  int measured = 0;                  // with a best time
  int errors = 0;                    // not measured at all
  std::array<PickSummary, 3> picks;  // by PickKind
  // Summed over measured problems: CudnnFinder::Search wall time and
  // cudnnFind's (all math types).
  double search_s = 0;
  double find_s = 0;
  double find_cold_s = 0;  // the preloading Find calls (kernels not loaded)

  const PickSummary& pick(PickKind k) const {
    return picks[static_cast<int>(k)];
  }
  // search_s / find_s; 0 when find_s is 0.
  double SearchOverFind() const;
};

// One row per (set, pass, dtype, layout) in order of first appearance, then
// one overall row per (pass, dtype) in order of first appearance.
std::vector<GroupSummary> Summarize(
    const std::vector<ProblemMeasurement>& measurements);

}  // namespace tunedb::regret

#endif  // TUNEDB_BENCH_REGRET_GROUP_SUMMARY_H_
