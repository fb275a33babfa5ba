#include "server/tuning/shape_predictor.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/key_fields.h"

namespace tunedb {
namespace {

// The shape fields a family leaves out.
bool IsShapeField(absl::string_view name) {
  return name == "n" || name == "c" || name == "k" || name == "in";
}

bool Depthwise(const ConvProblem& p) {
  return p.groups > 1 && p.groups == p.c && p.c == p.k;
}

struct Neighbour {
  const Record* record;
  double distance;
};

}  // namespace

ConfigId ConfigIdOf(const AlgoResult& r) {
  return {r.algo, r.math_type, KnobsText(r.knobs)};
}

std::string FamilyText(const ProblemKey& key) {
  absl::StatusOr<std::map<std::string, std::string>> fields =
      KeyFields(key.ToText());
  if (!fields.ok()) return std::string();
  std::string out;
  for (absl::string_view name : KeyFieldNames()) {
    auto it = fields->find(std::string(name));
    if (it == fields->end() || IsShapeField(name)) continue;
    const std::string value = name == "groups" && Depthwise(key.problem)
                                  ? std::string("depthwise")
                                  : it->second;
    absl::StrAppend(&out, out.empty() ? "" : " ", name, "=", value);
  }
  return out;
}

bool SameFamily(const ProblemKey& a, const ProblemKey& b) {
  ProblemKey shaped = b;
  shaped.problem.n = a.problem.n;
  shaped.problem.c = a.problem.c;
  shaped.problem.k = a.problem.k;
  shaped.problem.input = a.problem.input;
  if (Depthwise(a.problem) && Depthwise(b.problem)) {
    shaped.problem.groups = a.problem.groups;
  }
  return shaped == a;
}

RecordFilter FamilyFilter(const ProblemKey& key) {
  return RecordFilter::OfKeyFieldsBut(key, [](const std::string& name) {
    return IsShapeField(name) || name == "groups";
  });
}

double ShapeDistance(const ConvProblem& a, const ConvProblem& b) {
  const auto term = [](int64_t x, int64_t y) {
    if (x <= 0 || y <= 0) return 0.0;
    return std::fabs(std::log(static_cast<double>(x)) -
                     std::log(static_cast<double>(y)));
  };
  double d = term(a.n, b.n) + term(a.c, b.c) + term(a.k, b.k);
  const int dims = std::min(a.spatial_dims, b.spatial_dims);
  for (int i = 0; i < dims; ++i) d += term(a.input[i], b.input[i]);
  return d;
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
