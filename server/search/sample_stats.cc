#include "server/search/sample_stats.h"

#include <algorithm>

namespace tunedb {

double Spread(const std::vector<double>& v) {
  if (v.empty()) return 0;
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return *hi - *lo;
}

bool SettledAgainst(const std::vector<double>& leader,
                    const std::vector<double>& rival, double tie_margin) {
  if (leader.empty() || rival.empty()) return true;
  const double leader_ms = Median(leader);
  const bool tie = Median(rival) <= leader_ms * (1 + tie_margin);
  const bool slower = *std::min_element(rival.begin(), rival.end()) > leader_ms;
  return tie || slower;
}

}  // namespace tunedb
