// The problems a regret run measures: every convolution of built-in models
// (tuner/models.h) expanded into training passes and numeric setups
// (tuner/training_problems.h), and/or the lines of a file of key texts, in
// that order, deduplicated by problem text as `tunedb prewarm` does (the
// first occurrence keeps its model and source), then cut to the first
// `limit`.
//
// Each problem carries the set it is reported under: the model's name, or the
// file's base name.
//
// Thread safety: pure functions.
#ifndef TUNEDB_BENCH_REGRET_PROBLEM_SET_H_
#define TUNEDB_BENCH_REGRET_PROBLEM_SET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tunedb/problem.h"

namespace tunedb::regret {

// What to generate (the command line's --model ... --limit).
struct ProblemSetSpec {
  std::vector<std::string> models;  // names as tuner/models.cc spells them
  std::vector<int64_t> batches = {32};
  std::string ops = "fwd,bwd_data,bwd_filter";
  std::vector<std::string> dtypes = {"fp32"};   // dtype presets
  std::vector<std::string> layouts = {"nchw"};  // nchw, nhwc (ncdhw, ndhwc)
  std::string input;          // model input size; empty = each model's own
  std::string problems_file;  // key texts, one a line; empty = none
  int64_t limit = 0;          // 0 = no limit
};

// One problem with where it came from.
struct RegretProblem {
  ConvProblem problem;
  std::string set;     // "resnet50", or the file's base name
  std::string source;  // "resnet50/layer1.0.conv2 fwd", "heldout.keys:7"
};

struct ProblemSet {
  std::vector<RegretProblem> problems;
  int64_t duplicates = 0;        // dropped as repeats of an earlier problem
  int64_t dropped_by_limit = 0;  // unique problems past the limit
};

// Generates the problems of `spec`. INVALID_ARGUMENT naming the flag at
// fault for a bad model, dtype, layout, ops list, input size or file line;
// NOT_FOUND if the file cannot be opened; INVALID_ARGUMENT if neither models
// nor a file are given.
absl::StatusOr<ProblemSet> BuildProblemSet(const ProblemSetSpec& spec);

// The numeric setup a problem is reported under, named as the dtype presets
// are: "fp32" (TF32 allowed), "fp32-no-tf32", "fp16", "bf16", "fp64"; with
// "-no-tc" when tensor cores are not allowed (f16/bf16) and "-<type>acc" when
// half or bf16 data accumulates in other than f32.
std::string DtypeLabel(const ConvProblem& problem);

}  // namespace tunedb::regret

#endif  // TUNEDB_BENCH_REGRET_PROBLEM_SET_H_
