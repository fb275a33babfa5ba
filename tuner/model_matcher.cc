#include "tuner/model_matcher.h"

#include "tuner/models.h"
#include "tuner/training_problems.h"

namespace tunedb::tuner {
namespace {

// `p`'s pass and geometry as text; every other field at its default.
std::string GeometryOf(const ConvProblem& p) {
  ConvProblem g;
  g.op = p.op;
  g.spatial_dims = p.spatial_dims;
  g.c = p.c;
  g.k = p.k;
  g.input = p.input;
  g.filter = p.filter;
  g.padding = p.padding;
  g.stride = p.stride;
  g.dilation = p.dilation;
  g.groups = p.groups;
  g.mode = p.mode;
  return g.ToText();
}

}  // namespace

absl::StatusOr<ModelMatcher> ModelMatcher::Create(
    const std::vector<std::string>& models, const std::string& input) {
  ModelMatcher m;
  for (const std::string& name : models) {
    absl::StatusOr<BuiltModel> built = BuildModelFlag(name, input);
    if (!built.ok()) return built.status();
    const ModelInfo& model = *built->info;
    std::set<std::string> shapes;
    for (const PlannedProblem& p : LayerProblems(
             built->layers, model.spatial_dims, ProblemOptions{}, model.name)) {
      shapes.insert(GeometryOf(p.problem));
    }
    m.models_.emplace_back(model.name, std::move(shapes));
  }
  return m;
}

std::vector<std::string> ModelMatcher::ModelsOf(
    const ConvProblem& problem) const {
  std::vector<std::string> names;
  const std::string geometry = GeometryOf(problem);
  for (const auto& [name, shapes] : models_) {
    if (shapes.count(geometry) > 0) names.push_back(name);
  }
  return names;
}

std::vector<std::string> ModelMatcher::names() const {
  std::vector<std::string> names;
  for (const auto& [name, shapes] : models_) names.push_back(name);
  return names;
}

void AddModelFlags(CLI::App* cmd, std::vector<std::string>* models,
                   std::string* input) {
  cmd->add_option("-m,--model", *models,
                  "Only the problems that are layers of this built-in model, "
                  "at any batch, dtype and layout (repeatable; see `tunedb "
                  "models`)");
  cmd->add_option("--input", *input,
                  "The --model input size, e.g. 224 or 16x112x112 (default: "
                  "each model's own)");
}

}  // namespace tunedb::tuner
