#include "bench/regret/problem_set.h"

#include <fstream>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "tuner/models.h"
#include "tuner/shape_file.h"
#include "tuner/training_problems.h"

namespace tunedb::regret {
namespace {

using tuner::ProblemOptions;

// Appends problems, dropping repeats and counting them.
class Collector {
 public:
  explicit Collector(ProblemSet* set) : set_(set) {}
  void Add(const ConvProblem& p, const std::string& set_name,
           const std::string& source) {
    if (!seen_.insert(p.ToText()).second) {
      ++set_->duplicates;
      return;
    }
    set_->problems.push_back({p, set_name, source});
  }

 private:
  ProblemSet* set_;
  std::set<std::string> seen_;
};

absl::Status AddModels(const ProblemSetSpec& spec,
                       const std::vector<ProblemOptions>& combos,
                       Collector& out) {
  for (const std::string& name : spec.models) {
    absl::StatusOr<const tuner::ModelInfo*> model = tuner::FindModel(name);
    if (!model.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--model: ", model.status().message()));
    }
    std::vector<int64_t> input;
    if (!spec.input.empty()) {
      ASSIGN_OR_RETURN(
          input, tuner::ParseInputSize(spec.input, (*model)->spatial_dims));
    }
    ASSIGN_OR_RETURN(tuner::BuiltModel built,
                     tuner::BuildModel(**model, input));
    for (const ProblemOptions& o : combos) {
      for (const tuner::PlannedProblem& p : tuner::LayerProblems(
               built.layers, (*model)->spatial_dims, o, (*model)->name)) {
        out.Add(p.problem, (*model)->name, p.source);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status AddFile(const std::string& path, Collector& out) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("--problems: cannot open '", path, "'"));
  }
  const size_t slash = path.find_last_of('/');
  const std::string base =
      slash == std::string::npos ? path : path.substr(slash + 1);
  // Key-text lines are complete: the defaults are never consulted.
  tuner::ShapeFileResult r = tuner::ParseShapeFile(
      base, in, tuner::ShapeFormat::kKeyText, ProblemOptions{});
  if (!r.errors.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--problems: ", absl::StrJoin(r.errors, "\n")));
  }
  for (const tuner::ShapeEntry& e : r.entries)
    out.Add(e.problem, base, e.source);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ProblemSet> BuildProblemSet(const ProblemSetSpec& spec) {
  if (spec.models.empty() && spec.problems_file.empty()) {
    return absl::InvalidArgumentError(
        "give --model NAME[,NAME...] and/or --problems FILE");
  }
  if (spec.limit < 0) {
    return absl::InvalidArgumentError("--limit must be >= 0");
  }
  ASSIGN_OR_RETURN(std::vector<ProblemOptions> combos,
                   tuner::ProblemCombinations(spec.batches, spec.dtypes,
                                              spec.layouts, spec.ops));
  ProblemSet set;
  Collector collector(&set);
  RETURN_IF_ERROR(AddModels(spec, combos, collector));
  if (!spec.problems_file.empty()) {
    RETURN_IF_ERROR(AddFile(spec.problems_file, collector));
  }
  if (spec.limit > 0 &&
      static_cast<int64_t>(set.problems.size()) > spec.limit) {
    set.dropped_by_limit =
        static_cast<int64_t>(set.problems.size()) - spec.limit;
    set.problems.resize(static_cast<size_t>(spec.limit));
  }
  return set;
}

std::string DtypeLabel(const ConvProblem& p) {
  std::string label;
  switch (p.input_type) {
    case DataType::kFloat:
      return p.allow_tf32 && p.allow_tensor_cores ? "fp32" : "fp32-no-tf32";
    case DataType::kDouble:
      return "fp64";
    case DataType::kHalf:
      label = "fp16";
      break;
    case DataType::kBFloat16:
      label = "bf16";
      break;
  }
  if (!p.allow_tensor_cores) absl::StrAppend(&label, "-no-tc");
  if (p.compute_type != DataType::kFloat) {
    absl::StrAppend(&label, "-", DataTypeName(p.compute_type), "acc");
  }
  return label;
}

}  // namespace tunedb::regret
