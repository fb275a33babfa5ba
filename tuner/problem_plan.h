// ProblemPlan: the deduplicated problems of built-in models and shape files
// under every combination of --batch, --dtype and --layout (and --api), as
// the commands that ask about a set of problems take them (`tunedb
// coverage`, `tunedb report --model`). AddPlanFlags adds those flags to a
// command; BuildProblemPlan expands them.
//
// Thread safety: BuildProblemPlan reads stdin for a "-" shape file and
// writes errors through the context; call it from one thread.
#ifndef TUNEDB_TUNER_PROBLEM_PLAN_H_
#define TUNEDB_TUNER_PROBLEM_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "tunedb/problem.h"
#include "tuner/cli_context.h"
#include "tuner/prewarm_runner.h"

namespace tunedb::tuner {

// The flags that name a set of problems (as `tunedb prewarm` spells them).
struct ProblemFlags {
  std::vector<std::string> models;
  std::vector<std::string> files;
  std::string format = "auto";
  std::vector<int64_t> batches = {32};
  std::vector<std::string> dtypes = {"fp32"};
  std::vector<std::string> layouts = {"nchw"};
  std::string input;
  std::string ops = "fwd,bwd_data,bwd_filter";
  std::string api = "legacy";
  int align = ConvProblem::kMaxAlignment;

  bool empty() const { return models.empty() && files.empty(); }
};

// -m/--model, --file, --format, -b/--batch, --dtype, --layout, --input,
// --ops, --api and --align on `cmd`, into `flags`.
void AddPlanFlags(CLI::App* cmd, ProblemFlags* flags);

// Unique problems in model order, then shape-file order; `source` says
// where each came from ("resnet50/conv1 fwd").
struct ProblemPlan {
  std::vector<PrewarmItem> items;
  int64_t duplicates = 0;  // problems dropped as repeats
};

// The plan of `flags` for `device` (the device of every problem whose shape
// file line names none). kExitOk, or the exit code after printing why not on
// ctx.err(): a bad flag (kExitUsage), a shape file that cannot be opened or
// has bad lines (kExitBadInput, each bad line printed).
int BuildProblemPlan(CliContext& ctx, const ProblemFlags& flags,
                     const DeviceKey& device, ProblemPlan* plan);

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_PROBLEM_PLAN_H_
