#include "bench/regret/group_summary.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <tuple>

namespace tunedb::regret {
namespace {

using GroupKey = std::tuple<std::string, std::string, std::string, std::string>;

// Summarises the problems selected by `key_of` into rows, in order of first
// appearance.
std::vector<GroupSummary> SummarizeBy(
    const std::vector<ProblemMeasurement>& measurements,
    const std::function<GroupKey(const ProblemMeasurement&)>& key_of,
    bool overall) {
  std::vector<GroupKey> order;
  std::map<GroupKey, std::vector<const ProblemMeasurement*>> members;
  for (const ProblemMeasurement& m : measurements) {
    const GroupKey key = key_of(m);
    auto [it, added] = members.try_emplace(key);
    if (added) order.push_back(key);
    it->second.push_back(&m);
  }
  std::vector<GroupSummary> rows;
  for (const GroupKey& key : order) {
    GroupSummary g;
    std::tie(g.set, g.pass, g.dtype, g.layout) = key;
    g.overall = overall;
    std::array<std::vector<double>, 3> ratios;
    std::array<int, 3> missing = {0, 0, 0};
    for (const ProblemMeasurement* m : members[key]) {
      ++g.problems;
      if (!m->error.empty() || BestCandidate(*m) == nullptr) {
        ++g.errors;
        continue;
      }
      ++g.measured;
      g.search_s += m->search_s;
      g.find_s += m->find_s;
      g.find_cold_s += m->find_cold_s;
      for (PickKind kind : kPickKinds) {
        const int i = static_cast<int>(kind);
        if (std::optional<double> r = PickRatio(*m, kind)) {
          ratios[i].push_back(*r);
        } else {
          ++missing[i];
        }
      }
    }
    for (int i = 0; i < 3; ++i) {
      g.picks[i] = SummarizeRatios(ratios[i]);
      g.picks[i].missing = missing[i];
    }
    rows.push_back(std::move(g));
  }
  return rows;
}

std::string PassOf(const ProblemMeasurement& m) {
  return std::string(ConvOpName(m.problem.problem.op));
}

}  // namespace

PickSummary SummarizeRatios(const std::vector<double>& ratios) {
  PickSummary s;
  double log_sum = 0;
  for (double r : ratios) {
    ++s.ratios;
    if (r > kOver5Pct) ++s.over_5pct;
    if (r > kOver10Pct) ++s.over_10pct;
    s.worst = std::max(s.worst, r);
    log_sum += std::log(r);
  }
  if (s.ratios > 0) s.geomean = std::exp(log_sum / s.ratios);
  return s;
}

double GroupSummary::SearchOverFind() const {
  return find_s > 0 ? search_s / find_s : 0;
}

std::vector<GroupSummary> Summarize(
    const std::vector<ProblemMeasurement>& measurements) {
  std::vector<GroupSummary> rows = SummarizeBy(
      measurements,
      [](const ProblemMeasurement& m) {
        return GroupKey(m.problem.set, PassOf(m), DtypeLabel(m.problem.problem),
                        std::string(LayoutName(m.problem.problem.layout)));
      },
      /*overall=*/false);
  std::vector<GroupSummary> overall = SummarizeBy(
      measurements,
      [](const ProblemMeasurement& m) {
        return GroupKey("all", PassOf(m), DtypeLabel(m.problem.problem), "all");
      },
      /*overall=*/true);
  rows.insert(rows.end(), overall.begin(), overall.end());
  return rows;
}

}  // namespace tunedb::regret
