#include "bench/predict/predictor_compare.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/record_results.h"
#include "server/tuning/shape_predictor.h"
#include "server/tuning/version_predictor.h"

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

// A ratio above this is "more than 5 % off".
constexpr double kOffRatio = 1.05;

struct Tally {
  int keys = 0, fallbacks = 0, over = 0;
  double log_sum = 0, worst = 0;
  void Add(double ratio, bool fell_back) {
    ++keys;
    fallbacks += fell_back ? 1 : 0;
    over += ratio > kOffRatio ? 1 : 0;
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

// What every predictor of `target` is judged against: its fastest steady
// time, its heuristic pick's, and its own stored choice's for `caller`
// ("tunedb"; the heuristic's time where it has none, as a fallback).
struct Judged {
  double best_ms = 0;
  double heuristic_ms = 0;
  double own_ms = 0;
  bool own_fell = false;
};

// nullopt where `target` has no steady time for its fastest or for its
// heuristic pick: nothing can then be judged.
std::optional<Judged> JudgeAgainst(const Record& target,
                                   const Constraints& caller) {
  const AlgoResult* best = Fastest(target);
  const AlgoResult* heuristic = HeuristicPick(target);
  if (best == nullptr || heuristic == nullptr) return std::nullopt;
  Judged j;
  j.best_ms = Cost(*best);
  j.heuristic_ms = Cost(*heuristic);
  const AlgoResult* own = ChooseFrom(target.results, caller);
  j.own_fell = own == nullptr;
  j.own_ms = own != nullptr ? Cost(*own) : j.heuristic_ms;
  return j;
}

// Tallies by group, then by predictor name.
using Tallies = std::map<std::string, std::map<std::string, Tally>>;

// The scores of `tallies`; a group's `tuned` is its own in `tuned_keys`,
// else that of the whole group (its name up to the first comma).
std::vector<GroupScores> ScoresOf(
    const Tallies& tallies, const std::map<std::string, int>& tuned_keys) {
  std::vector<GroupScores> out;
  for (const auto& [group, by_name] : tallies) {
    GroupScores g;
    g.group = group;
    auto tuned = tuned_keys.find(group);
    if (tuned == tuned_keys.end()) {
      tuned = tuned_keys.find(group.substr(0, group.find(',')));
    }
    g.tuned = tuned != tuned_keys.end() ? tuned->second : 0;
    for (const auto& [name, tally] : by_name) {
      g.by_predictor[name] = tally.Score();
    }
    out.push_back(std::move(g));
  }
  return out;
}

// `source`'s records of `target`'s problem on its GPU model under another
// cuDNN version: what the daemon reads for it (OtherVersionsFilter), less
// the records of the target's own version.
std::vector<Record> OtherVersionsOf(const Record& target,
                                    const std::vector<Record>& source) {
  const RecordFilter filter = OtherVersionsFilter(target.key);
  std::vector<Record> others;
  for (const Record& r : source) {
    if (r.key.device.cudnn_version != target.key.device.cudnn_version &&
        filter.Matches(r)) {
      others.push_back(r);
    }
  }
  return others;
}

// The daemon's answer for `key` from `others` to `caller`: its candidates
// in order, or none.
std::vector<ConfigId> OldChoices(const ProblemKey& key,
                                 const std::vector<Record>& others,
                                 const Constraints& caller) {
  std::vector<ConfigId> out;
  if (std::optional<Prediction> p =
          PredictFromOtherVersion(key, others, caller)) {
    for (const AlgoResult& c : p->candidates) out.push_back(ConfigIdOf(c));
  }
  return out;
}

}  // namespace

const std::vector<std::string>& PredictorNames() {
  static const std::vector<std::string> names = {
      "nearest", "family-best", "heuristic", "tunedb", "another search"};
  return names;
}

std::vector<GroupScores> ComparePredictors(const std::vector<Record>& records,
                                           int neighbours,
                                           const std::vector<Record>& repeat) {
  std::map<std::string, const Record*> repeated;
  for (const Record& r : repeat) repeated.emplace(r.key.ToText(), &r);
  std::map<std::string, std::vector<const Record*>> families;
  for (const Record& r : records) families[FamilyText(r.key)].push_back(&r);
  Tallies tallies;
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
      const std::optional<Judged> judged = JudgeAgainst(*h, Constraints{});
      if (!judged) continue;
      const double best_ms = judged->best_ms;
      const double heuristic_ms = judged->heuristic_ms;
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
      std::optional<double> again_ms;
      bool fell_again = false;
      if (auto it = repeated.find(h->key.ToText()); it != repeated.end()) {
        std::vector<ConfigId> again;
        if (const AlgoResult* c = ChooseFrom(it->second->results, {})) {
          again.push_back(ConfigIdOf(*c));
        }
        again_ms = FirstTimed(*h, again, heuristic_ms, &fell_again);
      }
      // The whole group, and the group by how near the nearest tuned shape
      // is (a program's new input size is near; another model's layer far).
      for (const std::string& g :
           {group, absl::StrCat(group, ", ", DistanceBucket(distance))}) {
        std::map<std::string, Tally>& t = tallies[g];
        t["nearest"].Add(nearest_ms / best_ms, fell_nearest);
        t["family-best"].Add(family_ms / best_ms, fell_family);
        t["heuristic"].Add(heuristic_ms / best_ms, false);
        t["tunedb"].Add(judged->own_ms / best_ms, judged->own_fell);
        if (again_ms) t["another search"].Add(*again_ms / best_ms, fell_again);
      }
    }
  }
  return ScoresOf(tallies, tuned_keys);
}

const std::vector<std::string>& VersionPredictorNames() {
  static const std::vector<std::string> names = {"old choice", "heuristic",
                                                 "tunedb"};
  return names;
}

VersionComparison CompareVersions(const std::vector<Record>& source,
                                  const std::vector<Record>& target,
                                  const Constraints& caller) {
  VersionComparison out;
  Tallies tallies;
  std::map<std::string, int> held_keys;
  for (const Record& t : target) {
    ++out.target_keys;
    const std::vector<Record> others = OtherVersionsOf(t, source);
    if (others.empty()) continue;
    ++out.held_by_source;
    const std::string group = GroupOf(t.key);
    const std::string groups[] = {
        "all", group, absl::StrCat(group, ", ", ConvOpName(t.key.problem.op))};
    for (const std::string& g : groups) ++held_keys[g];
    const std::optional<Judged> judged = JudgeAgainst(t, caller);
    if (!judged) {
      ++out.not_judged;
      continue;
    }
    bool fell = false;
    const double old_ms = FirstTimed(t, OldChoices(t.key, others, caller),
                                     judged->heuristic_ms, &fell);
    out.old_choice_faster += judged->heuristic_ms > old_ms * kOffRatio ? 1 : 0;
    out.heuristic_faster += old_ms > judged->heuristic_ms * kOffRatio ? 1 : 0;
    for (const std::string& g : groups) {
      std::map<std::string, Tally>& by_name = tallies[g];
      by_name["old choice"].Add(old_ms / judged->best_ms, fell);
      by_name["heuristic"].Add(judged->heuristic_ms / judged->best_ms, false);
      by_name["tunedb"].Add(judged->own_ms / judged->best_ms, judged->own_fell);
    }
  }
  out.groups = ScoresOf(tallies, held_keys);
  return out;
}

}  // namespace tunedb
