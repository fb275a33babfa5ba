#include "server/tuning/shape_predictor.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tunedb {
namespace {

// The shape fields a family leaves out (FamilyText's, and groups).
bool IsShapeField(const std::string& name) {
  return name == "n" || name == "c" || name == "k" || name == "in" ||
         name == "groups";
}

struct Neighbour {
  const Record* record;
  double distance;
};

}  // namespace

ConfigId ConfigIdOf(const AlgoResult& r) {
  return {r.algo, r.math_type, KnobsText(r.knobs)};
}

RecordFilter FamilyFilter(const ProblemKey& key) {
  return RecordFilter::OfKeyFieldsBut(key, IsShapeField);
}

std::optional<Prediction> PredictFrom(
    const ProblemKey& key,
    const std::vector<std::shared_ptr<const Record>>& family,
    const Constraints& caller, int neighbours) {
  const Constraints constraints = PredictionConstraints(caller);
  std::vector<Neighbour> near;
  for (const std::shared_ptr<const Record>& r : family) {
    if (r == nullptr || !r->supported() || r->key == key ||
        !SameFamily(key, r->key)) {
      continue;
    }
    near.push_back({r.get(), ShapeDistance(key.problem, r->key.problem)});
  }
  std::stable_sort(near.begin(), near.end(),
                   [](const Neighbour& a, const Neighbour& b) {
                     return a.distance < b.distance;
                   });
  struct Vote {
    AlgoResult config;
    double weight = 0;
    double nearest = 0;  // distance of its nearest voter
    std::vector<std::string> voters;
  };
  std::vector<Vote> votes;
  double total = 0;
  double nearest_voter = 0;
  int counted = 0;
  for (const Neighbour& n : near) {
    if (counted >= neighbours) break;
    std::optional<AlgoResult> choice = Choose(*n.record, constraints);
    if (!choice) continue;
    if (counted++ == 0) nearest_voter = n.distance;
    const double weight = 1.0 / (1.0 + n.distance);
    total += weight;
    auto it = std::find_if(votes.begin(), votes.end(), [&](const Vote& v) {
      return ConfigIdOf(v.config) == ConfigIdOf(*choice);
    });
    if (it == votes.end()) {
      choice->plan.clear();
      votes.push_back({*std::move(choice), 0, n.distance, {}});
      it = votes.end() - 1;
    }
    it->weight += weight;
    it->voters.push_back(n.record->key.ToText());
  }
  if (votes.empty()) return std::nullopt;
  // Most weight first; a tie goes to the nearer voter (stable: first seen).
  std::stable_sort(votes.begin(), votes.end(),
                   [](const Vote& a, const Vote& b) {
                     return a.weight > b.weight;
                   });
  Prediction p;
  for (Vote& v : votes) p.candidates.push_back(std::move(v.config));
  p.sources = votes[0].voters;
  p.distance = nearest_voter;
  p.confidence = votes[0].weight / total / (1.0 + votes[0].nearest);
  return p;
}

}  // namespace tunedb
