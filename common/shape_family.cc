#include "common/shape_family.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "common/key_fields.h"
#include "common/valid_key.h"

namespace tunedb {
namespace {

// The shape fields a family leaves out.
bool IsShapeField(absl::string_view name) {
  return name == "n" || name == "c" || name == "k" || name == "in";
}

bool Depthwise(const ConvProblem& p) {
  return p.groups > 1 && p.groups == p.c && p.c == p.k;
}

}  // namespace

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

int32_t FamilyHash(const ProblemKey& key) {
  return static_cast<int32_t>(
      static_cast<uint32_t>(KeyTextHash(FamilyText(key))));
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

std::optional<ShapePoint> ShapeLogs(const ConvProblem& problem) {
  ShapePoint point{};
  const int64_t sizes[3] = {problem.n, problem.c, problem.k};
  const int dims =
      std::clamp(problem.spatial_dims, 0, ConvProblem::kMaxSpatialDims);
  for (int i = 0; i < 3 + dims; ++i) {
    const int64_t x = i < 3 ? sizes[i] : problem.input[i - 3];
    if (x <= 0) return std::nullopt;
    point[i] = std::log(static_cast<double>(x));
  }
  return point;
}

}  // namespace tunedb
