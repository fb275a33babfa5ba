#include "bench/predict/predictor_compare.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/record_results.h"
#include "server/tuning/shape_predictor.h"

namespace tunedb {
namespace {

// Every config may be chosen; build time is not counted (a loaded plan or a
// long run): the comparison is of run times.
Constraints AnyConfig() {
  Constraints c;
  c.compile_horizon_calls = 0;
  return c;
}

double Cost(const AlgoResult& r) {
  return r.cost(LaunchMode::kDirect).median_ms;
}

// Whether `r` ran, with a steady time to compare: screened or re-timed
// (retimed). A config with only its Find time has the first run of its
// kernels as its time (their loading included, up to 5x its steady cost on
// the H200), and is not compared.
bool Ran(const AlgoResult& r) {
  return Meets(r, AnyConfig()) && Cost(r) > 0 && r.retimed;
}

// The time `record` measured for config `id`, or nullopt where it did not
// time it (or it did not run).
std::optional<double> TimeOf(const Record& record, const ConfigId& id) {
  for (const AlgoResult& r : record.results) {
    if (Ran(r) && ConfigIdOf(r) == id) return Cost(r);
  }
  return std::nullopt;
}

// The fastest config that ran in `record`, or null.
const AlgoResult* Fastest(const Record& record) {
  const AlgoResult* best = nullptr;
  for (const AlgoResult& r : record.results) {
    if (!Ran(r)) continue;
    if (best == nullptr || Cost(r) < Cost(*best)) best = &r;
  }
  return best;
}

// The heuristic's first choice in `record` where it ran with a steady time,
// else null.
const AlgoResult* HeuristicPick(const Record& record) {
  const AlgoResult* pick = nullptr;
  for (const AlgoResult& r : record.results) {
    if (r.heuristic_rank <= 0 || r.status != AlgoStatus::kOk) continue;
    if (pick == nullptr || r.heuristic_rank < pick->heuristic_rank) pick = &r;
  }
  return pick != nullptr && Ran(*pick) ? pick : nullptr;
}

// Family-best: configs by mean log-regret over `tuned`, for configs timed in
// at least half of them.
std::vector<ConfigId> FamilyBest(
    const std::vector<std::shared_ptr<const Record>>& tuned) {
  std::map<ConfigId, std::pair<double, int>> sums;
  for (const auto& record : tuned) {
    const AlgoResult* best = Fastest(*record);
    if (best == nullptr) continue;
    std::map<ConfigId, double> seen;
    for (const AlgoResult& r : record->results) {
      if (!Ran(r)) continue;
      const ConfigId id = ConfigIdOf(r);
      if (seen.count(id) == 0) seen[id] = std::log(Cost(r) / Cost(*best));
    }
    for (const auto& [id, regret] : seen) {
      sums[id].first += regret;
      sums[id].second += 1;
    }
  }
  std::vector<std::pair<double, ConfigId>> ranked;
  for (const auto& [id, sum] : sums) {
    if (2 * sum.second < static_cast<int>(tuned.size())) continue;
    ranked.push_back({sum.first / sum.second, id});
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<ConfigId> out;
  for (const auto& [mean, id] : ranked) out.push_back(id);
  return out;
}

// The time of the first of `candidates` that `held` timed, else the
// heuristic's; `fallback` says whether it was not the first.
double FirstTimed(const Record& held, const std::vector<ConfigId>& candidates,
                  double heuristic_ms, bool* fallback) {
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (std::optional<double> t = TimeOf(held, candidates[i])) {
      *fallback = i > 0;
      return *t;
    }
  }
  *fallback = true;
  return heuristic_ms;
}

std::string GroupOf(const ProblemKey& key) {
  return absl::StrCat(key.problem.api == ConvApi::kGraph ? "graph" : "legacy",
                      " ", DataTypeName(key.problem.input_type));
}

// The held-out keys by the distance of their nearest tuned shape
// (ShapeDistance): 0.25 is one dim 28 % off (or several less), 1 about one
// dim 2.7x off.
std::string DistanceBucket(double distance) {
  if (distance < 0) return "no neighbour";
  if (distance <= 0.25) return "nearest <= 0.25";
  if (distance <= 1.0) return "nearest 0.25-1";
  return "nearest > 1";
}

struct Tally {
  int keys = 0, fallbacks = 0, over = 0;
  double log_sum = 0, worst = 0;
  void Add(double ratio, bool fell_back) {
    ++keys;
    fallbacks += fell_back ? 1 : 0;
    over += ratio > 1.05 ? 1 : 0;
    log_sum += std::log(ratio);
    worst = std::max(worst, ratio);
  }
  PredictorScore Score() const {
    PredictorScore s;
    s.keys = keys;
    s.fallbacks = fallbacks;
    s.geomean_ratio = keys > 0 ? std::exp(log_sum / keys) : 0;
    s.share_over_5pct = keys > 0 ? static_cast<double>(over) / keys : 0;
    s.worst_ratio = worst;
    return s;
  }
};

bool ShapeLess(const Record& a, const Record& b) {
  const ConvProblem& x = a.key.problem;
  const ConvProblem& y = b.key.problem;
  return std::tie(x.n, x.c, x.k, x.input) < std::tie(y.n, y.c, y.k, y.input);
}

}  // namespace

const std::vector<std::string>& PredictorNames() {
  static const std::vector<std::string> names = {"nearest", "family-best",
                                                 "heuristic", "tunedb"};
  return names;
}

std::vector<GroupScores> ComparePredictors(const std::vector<Record>& records,
                                           int neighbours) {
  std::map<std::string, std::vector<const Record*>> families;
  for (const Record& r : records) families[FamilyText(r.key)].push_back(&r);
  std::map<std::string, std::map<std::string, Tally>> tallies;
  std::map<std::string, int> tuned_keys;
  for (auto& [family, members] : families) {
    std::sort(members.begin(), members.end(),
              [](const Record* a, const Record* b) {
                return ShapeLess(*a, *b);
              });
    std::vector<std::shared_ptr<const Record>> tuned;
    std::vector<const Record*> held;
    for (size_t i = 0; i < members.size(); ++i) {
      if (i % 2 == 0) {
        tuned.push_back(std::make_shared<const Record>(*members[i]));
      } else {
        held.push_back(members[i]);
      }
    }
    const std::string group = GroupOf(members[0]->key);
    tuned_keys[group] += static_cast<int>(tuned.size());
    const std::vector<ConfigId> family_best = FamilyBest(tuned);
    for (const Record* h : held) {
      const AlgoResult* best = Fastest(*h);
      const AlgoResult* heuristic = HeuristicPick(*h);
      // Without the fastest or the heuristic's pick, nothing can be judged.
      if (best == nullptr || heuristic == nullptr) {
        continue;
      }
      const double best_ms = Cost(*best);
      const double heuristic_ms = Cost(*heuristic);
      std::vector<ConfigId> nearest;
      double distance = -1;
      if (std::optional<Prediction> p =
              PredictFrom(h->key, tuned, AnyConfig(), neighbours)) {
        for (const AlgoResult& c : p->candidates) {
          nearest.push_back(ConfigIdOf(c));
        }
        distance = p->distance;
      }
      bool fell_nearest = false, fell_family = false;
      const double nearest_ms =
          FirstTimed(*h, nearest, heuristic_ms, &fell_nearest);
      const double family_ms =
          FirstTimed(*h, family_best, heuristic_ms, &fell_family);
      const AlgoResult* own = ChooseFrom(h->results, Constraints{});
      // The whole group, and the group by how near the nearest tuned shape
      // is (a program's new input size is near; another model's layer far).
      for (const std::string& g :
           {group, absl::StrCat(group, ", ", DistanceBucket(distance))}) {
        std::map<std::string, Tally>& t = tallies[g];
        t["nearest"].Add(nearest_ms / best_ms, fell_nearest);
        t["family-best"].Add(family_ms / best_ms, fell_family);
        t["heuristic"].Add(heuristic_ms / best_ms, false);
        t["tunedb"].Add(
            (own != nullptr ? Cost(*own) : heuristic_ms) / best_ms,
            own == nullptr);
      }
    }
  }
  std::vector<GroupScores> out;
  for (const auto& [group, by_name] : tallies) {
    GroupScores g;
    g.group = group;
    g.tuned = tuned_keys[group.substr(0, group.find(','))];
    for (const auto& [name, tally] : by_name) {
      g.by_predictor[name] = tally.Score();
    }
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace tunedb
