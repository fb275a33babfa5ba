// `tunedb coverage`: which problems of models and/or shape files have no
// tuned record for a device; exit 10 (kExitGaps) when some have none.
#include <memory>

#include "absl/strings/str_cat.h"
#include "tuner/commands.h"
#include "tuner/coverage.h"
#include "tuner/exit_codes.h"
#include "tuner/problem_plan.h"
#include "tuner/render.h"

namespace tunedb::tuner {
namespace {

struct CoverageFlags {
  ProblemFlags problems;
  std::string gpu;
  std::string device;  // the device key text, instead of asking the daemon
  bool csv = false;
  bool no_predict = false;
};

// The device the flags name, or an exit code after printing why not.
int CoverageDevice(CliContext& ctx, const CoverageFlags& f, DeviceKey* out) {
  if (!f.device.empty()) {
    auto parsed = DeviceKey::Parse(f.device);
    if (!parsed.ok()) {
      return ctx.Fail(absl::InvalidArgumentError(
          absl::StrCat("--device: ", parsed.status().message())));
    }
    *out = *parsed;
    return kExitOk;
  }
  auto resolved = ctx.ResolveDevice(f.gpu);
  if (!resolved.ok()) return ctx.Fail(resolved.status());
  *out = *resolved;
  return kExitOk;
}

int RunCoverage(CliContext& ctx, const CoverageFlags& f) {
  if (f.problems.empty()) {
    ctx.err() << "tunedb: error: give --model NAME and/or --file PATH "
                 "(see `tunedb models`)\n";
    return kExitUsage;
  }
  DeviceKey device;
  if (int code = CoverageDevice(ctx, f, &device); code != kExitOk) {
    return code;
  }
  ProblemPlan plan;
  if (int code = BuildProblemPlan(ctx, f.problems, device, &plan);
      code != kExitOk) {
    return code;
  }
  auto result = CheckCoverage(ctx, device, plan.items, !f.no_predict);
  if (!result.ok()) return ctx.Fail(result.status());
  result->duplicates = plan.duplicates;
  Render(ctx, FormOf(ctx, f.csv), *result,
         Renderer<CoverageResult>{CoverageToJson, PrintCoverage, CoverageCsv});
  return result->covered() ? kExitOk : kExitGaps;
}

}  // namespace

void AddCoverageCommand(CLI::App& app, CliContext& ctx, int* exit_code) {
  auto flags = std::make_shared<CoverageFlags>();
  CLI::App* cmd = app.add_subcommand(
      "coverage",
      "List the problems of models and/or shape files with no tuned record "
      "for a device (exit 10 if any)");
  AddPlanFlags(cmd, &flags->problems);
  cmd->add_option("--gpu", flags->gpu,
                  "GPU to check: CUDA ordinal or model substring (default: "
                  "the daemon's first)");
  cmd->add_option("--device", flags->device,
                  "Device key to check instead of asking the daemon (a GPU "
                  "this host does not have; `tunedb devices` lists the "
                  "fields)");
  cmd->add_flag("--csv", flags->csv, "The gaps as CSV with a header row");
  cmd->add_flag("--no-predict", flags->no_predict,
                "Do not ask the daemon which gaps it answers by prediction");
  cmd->callback(
      [&ctx, flags, exit_code] { *exit_code = RunCoverage(ctx, *flags); });
}

}  // namespace tunedb::tuner
