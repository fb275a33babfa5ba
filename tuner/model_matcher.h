// ModelMatcher: which stored problems are layers of built-in models, for
// `--model` of `tunedb revalidate` and `tunedb diff`. A problem belongs to a
// model when its pass and geometry (spatial dimensions, channels, input
// size, filter, padding, stride, dilation, groups, mode) are those of one of
// the model's training problems at the model's default input size (or
// `--input`); batch, data types, layout, API and alignment are not compared,
// so a model prewarmed at any batch and dtype, or learned from a program, is
// found. A shape shared by two models belongs to both.
//
// Thread safety: immutable after Create.
#ifndef TUNEDB_TUNER_MODEL_MATCHER_H_
#define TUNEDB_TUNER_MODEL_MATCHER_H_

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "tunedb/problem.h"

namespace tunedb::tuner {

class ModelMatcher {
 public:
  // The layers of `models` (built-in names, `tunedb models`) at `input`
  // ("" for each model's default). INVALID_ARGUMENT for a name or input
  // that does not build (BuildModelFlag).
  static absl::StatusOr<ModelMatcher> Create(
      const std::vector<std::string>& models, const std::string& input);

  // The names of the models `problem` belongs to, in the order given.
  std::vector<std::string> ModelsOf(const ConvProblem& problem) const;
  // Whether `problem` belongs to any of them.
  bool Matches(const ConvProblem& problem) const {
    return !ModelsOf(problem).empty();
  }
  bool empty() const { return models_.empty(); }
  // The models' names (as `tunedb models` spells them), in the order given.
  std::vector<std::string> names() const;

 private:
  // Each model's name and the geometry texts of its problems.
  std::vector<std::pair<std::string, std::set<std::string>>> models_;
};

// `-m,--model NAME` (repeatable) and `--input SIZE` on `cmd`, into `models`
// and `input`, as ModelMatcher::Create takes them.
void AddModelFlags(CLI::App* cmd, std::vector<std::string>* models,
                   std::string* input);

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_MODEL_MATCHER_H_
