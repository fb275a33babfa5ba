// `tunedb prewarm`: tune every convolution of built-in models and/or shape
// files (problem_plan.h), skipping what is stored; and `tunedb pin make`.
#include <algorithm>
#include <iostream>
#include <memory>

#include "absl/strings/str_cat.h"
#include "common/pin_file.h"
#include "nlohmann/json.hpp"
#include "proto/convert.h"
#include "tuner/commands.h"
#include "tuner/exit_codes.h"
#include "tuner/fleet_prewarm.h"
#include "tuner/format.h"
#include "tuner/interrupt.h"
#include "tuner/pin_maker.h"
#include "tuner/problem_plan.h"
#include "tuner/prewarm_runner.h"
#include "tuner/progress_bar.h"
#include "tuner/render.h"
#include "tuner/table.h"

namespace tunedb::tuner {
namespace {

struct PrewarmFlags {
  ProblemFlags problems;  // what to tune (problem_plan.h)
  std::string gpu;
  bool force = false;
  int64_t limit = 0;
  int window = 0;  // 0: two per GPU sharing the device key, at least 8
  double drain_s = 30;
  bool no_progress = false;
  bool dry_run = false;
  std::string device;  // --device: the device key text (fleet prewarm)
  FleetPrewarmFlags fleet;
};

using Plan = ProblemPlan;

// `prewarm --dry-run` shows the plan.
nlohmann::json PlanToJson(const Plan& plan) {
  nlohmann::json j = nlohmann::json::array();
  for (const PrewarmItem& item : plan.items) {
    j.push_back(
        {{"source", item.source}, {"problem", item.key.problem.ToText()}});
  }
  return j;
}

void PrintPlan(const Plan& plan, std::ostream& out) {
  Table table({"source", "op", "shape", "type", "layout"});
  for (const PrewarmItem& item : plan.items) {
    const ConvProblem& p = item.key.problem;
    table.AddRow({item.source, std::string(ConvOpName(p.op)), ShapeSummary(p),
                  TypeSummary(p), std::string(LayoutName(p.layout))});
  }
  table.Print(out);
  out << plan.items.size() << " unique problems (" << plan.duplicates
      << " duplicates dropped)\n";
}

// What a prewarm shows when it is done.
struct PrewarmResult {
  PrewarmSummary summary;
  int64_t duplicates = 0;
};

nlohmann::json PrewarmResultToJson(const PrewarmResult& r) {
  const PrewarmSummary& s = r.summary;
  nlohmann::json failures = nlohmann::json::array();
  for (const PrewarmFailure& f : s.failures) {
    failures.push_back(
        {{"source", f.source}, {"key", f.key}, {"error", f.error}});
  }
  return {{"shapes", s.shapes},
          {"duplicates_dropped", r.duplicates},
          {"already_stored", s.already_stored},
          {"sent", s.sent},
          {"searched", s.searched},
          {"hits", s.hits},
          {"failed", s.failed},
          {"not_sent", s.not_sent},
          {"unanswered", s.unanswered},
          {"search_ms_spent", s.search_ms_spent},
          {"search_ms_saved_per_process", s.search_ms_saved},
          {"interrupted", s.interrupted},
          {"failures", failures}};
}

void PrintPrewarmResult(const PrewarmResult& r, std::ostream& out) {
  const PrewarmSummary& s = r.summary;
  out << "prewarm summary\n";
  PrintKeyValues(
      out, {{"  shapes (unique)", absl::StrCat(s.shapes)},
            {"  already stored (skipped)", absl::StrCat(s.already_stored)},
            {"  searches run", absl::StrCat(s.searched)},
            {"  hits (stored meanwhile)", absl::StrCat(s.hits)},
            {"  failures", absl::StrCat(s.failed)},
            {"  not sent (limit/interrupt)", absl::StrCat(s.not_sent)},
            {"  sent but unanswered", absl::StrCat(s.unanswered)},
            {"  search time spent", FormatSeconds(s.search_ms_spent / 1000)},
            {"  search time saved per later process",
             FormatSeconds(s.search_ms_saved / 1000)}});
}

// For people, on stderr: the first ten failures (--json lists them all).
void ReportFailures(std::ostream& err, const PrewarmSummary& s) {
  for (size_t i = 0; i < s.failures.size() && i < 10; ++i) {
    err << "failed: " << s.failures[i].source << ": " << s.failures[i].error
        << "\n";
  }
  if (s.failures.size() > 10) {
    err << "... and " << s.failures.size() - 10
        << " more failures (use --json to see all)\n";
  }
}

// The device to tune for (--device, or --gpu's through the daemon; none for
// a dry run without --device) and how many of the daemon's GPUs share it;
// an exit code after printing the error otherwise.
int ResolveTarget(CliContext& ctx, const PrewarmFlags& f,
                  std::optional<DeviceKey>* device, int* gpus) {
  if (!f.device.empty()) {
    auto parsed = DeviceKey::Parse(f.device);
    if (!parsed.ok()) {
      return ctx.Fail(absl::InvalidArgumentError(
          absl::StrCat("--device: ", parsed.status().message())));
    }
    *device = *parsed;
  } else if (!f.dry_run) {
    auto resolved = ctx.ResolveDevice(f.gpu, gpus);
    if (!resolved.ok()) return ctx.Fail(resolved.status());
    *device = *resolved;
  }
  return kExitOk;
}

// --fleet: the plan becomes fleet jobs.
int PrewarmOnFleet(CliContext& ctx, const PrewarmFlags& f, const Plan& plan,
                   const DeviceKey& device) {
  const int64_t problems = static_cast<int64_t>(plan.items.size());
  ctx.err() << (f.limit > 0 ? std::min(problems, f.limit) : problems)
            << " unique problems (" << plan.duplicates
            << " duplicates dropped) for " << device.gpu_model
            << " to the fleet\n";
  return RunFleetItems(ctx, f.fleet, !f.no_progress, plan.items, f.limit);
}

// Tunes the plan through the daemon and shows the summary.
int PrewarmOnDaemon(CliContext& ctx, const PrewarmFlags& f, const Plan& plan,
                    const DeviceKey& device, int gpus) {
  ctx.err() << plan.items.size() << " unique problems (" << plan.duplicates
            << " duplicates dropped) for " << device.gpu_model << " (" << gpus
            << " GPU" << (gpus == 1 ? "" : "s") << ")\n";
  PrewarmOptions options;
  options.force = f.force;
  options.limit = f.limit;
  options.window = f.window > 0 ? f.window : std::max(8, 2 * gpus);
  options.drain = absl::Milliseconds(static_cast<int64_t>(f.drain_s * 1000));
  options.progress = !f.no_progress;
  ScopedSigintHandler sigint(ctx.io().handle_signals);
  auto summary = RunPrewarm(ctx, plan.items, options);
  if (!summary.ok()) return ctx.Fail(summary.status());
  const PrewarmResult result{*std::move(summary), plan.duplicates};
  Render(ctx, FormOf(ctx), result,
         Renderer<PrewarmResult>{PrewarmResultToJson, PrintPrewarmResult});
  if (!ctx.json()) ReportFailures(ctx.err(), result.summary);
  const PrewarmSummary& s = result.summary;
  if (!s.stream_status.ok()) return ctx.Fail(s.stream_status);
  if (s.interrupted) {
    ctx.err() << "interrupted: rerun the same command to resume (stored "
                 "results are skipped)\n";
    return kExitInterrupted;
  }
  return s.failed > 0 ? kExitPartial : kExitOk;
}

// The target device (ResolveTarget) and the plan (BuildProblemPlan) of `f`'s
// models and shape files, or an exit code after printing why not.
int TargetAndPlan(CliContext& ctx, const PrewarmFlags& f,
                  std::optional<DeviceKey>* device, int* gpus, Plan* plan) {
  if (f.problems.empty()) {
    ctx.err() << "tunedb: error: give --model NAME and/or --file PATH "
                 "(see `tunedb models`)\n";
    return kExitUsage;
  }
  if (int code = ResolveTarget(ctx, f, device, gpus); code != kExitOk) {
    return code;
  }
  return BuildProblemPlan(ctx, f.problems, device->value_or(DeviceKey()),
                          plan);
}

int RunPrewarmCommand(CliContext& ctx, const PrewarmFlags& f) {
  std::optional<DeviceKey> device;
  int gpus = 1;
  Plan plan;
  if (int code = TargetAndPlan(ctx, f, &device, &gpus, &plan);
      code != kExitOk) {
    return code;
  }
  if (f.dry_run) {
    Render(ctx, FormOf(ctx), plan, Renderer<Plan>{PlanToJson, PrintPlan});
    return kExitOk;
  }
  if (!f.fleet.url.empty()) return PrewarmOnFleet(ctx, f, plan, *device);
  return PrewarmOnDaemon(ctx, f, plan, *device, gpus);
}

// Where and how to tune them.
void AddRunFlags(CLI::App* cmd, PrewarmFlags* flags) {
  cmd->add_option("--gpu", flags->gpu,
                  "GPU to tune on: CUDA ordinal or model substring (default: "
                  "the daemon's first)");
  cmd->add_flag("--force", flags->force, "Search again even if stored");
  cmd->add_option("--limit", flags->limit,
                  "Send at most N problems this run (rerun for the rest)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--window", flags->window,
                  "Problems in flight at once (default: 2 per GPU of the "
                  "chosen kind, at least 8)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--drain", flags->drain_s,
                  "On Ctrl-C, seconds to wait for answers already in flight")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_flag("--no-progress", flags->no_progress, "No progress output");
  cmd->add_option("--device", flags->device,
                  "Device key to tune for instead of asking the daemon, e.g. "
                  "'gpu=NVIDIA%20H200 cc=9.0 sms=132 cudnn=9.19.0 cuda=13.0' "
                  "(the device part of a key: `tunedb devices` lists its fields)");
}

// `tunedb pin make`: the plan's answers from the daemon's records into the
// pin `out` (merged with a pin already there, whose answers stay).
int MakePin(CliContext& ctx, const PrewarmFlags& f, const std::string& out,
            bool deterministic) {
  std::optional<DeviceKey> device;
  int gpus = 1;
  Plan plan;
  if (int code = TargetAndPlan(ctx, f, &device, &gpus, &plan);
      code != kExitOk) {
    return code;
  }
  PinMaker maker(*device, deterministic);
  ProgressBar bar(ctx.err(), ctx.io().stderr_is_tty, "pinning",
                  static_cast<int64_t>(plan.items.size()));
  if (f.no_progress) bar.Silence();
  int64_t done = 0;
  for (const PrewarmItem& item : plan.items) {
    v1::LookupRequest request;
    ToProto(item.key.problem, request.mutable_problem());
    ToProto(item.key.device, request.mutable_device());
    auto response = ctx.Call(&v1::TuneDb::Stub::Lookup, request);
    if (absl::IsNotFound(response.status())) {
      maker.AddMissing();
    } else if (!response.ok()) {
      return ctx.Fail(response.status());
    } else if (auto record = FromProto(response->record()); record.ok()) {
      maker.Add(*record);
    } else {
      return ctx.Fail(absl::InternalError(absl::StrCat(
          "the daemon's record is malformed: ", record.status().message())));
    }
    bar.Update(++done);
  }
  bar.Finish();
  if (absl::Status s = MergePinFile(out, maker.pin()); !s.ok()) {
    // The daemon answered: what failed is the file (its own exit code).
    ctx.err() << "tunedb: error: the pin " << out
              << " was not written: " << s.message() << "\n";
    return kExitNotWritten;
  }
  if (ctx.json()) {
    nlohmann::json j;
    j["pin"] = out;
    j["problems"] = maker.problems() + maker.missing();
    j["stored"] = maker.problems();
    j["not_stored"] = maker.missing();
    j["answers"] = maker.pin().entries.size();
    ctx.out() << j.dump() << "\n";
  } else {
    ctx.out() << "pinned " << maker.pin().entries.size() << " answers for "
              << maker.problems() << " stored problems into " << out << "\n";
    if (maker.missing() > 0) {
      ctx.out() << maker.missing()
                << " problems are not stored, so not pinned: a pinned run "
                   "gives them cuDNN's first heuristic choice (tune them "
                   "first: tunedb prewarm with the same flags)\n";
    }
  }
  return kExitOk;
}

}  // namespace

void AddPinMakeCommand(CLI::App& pin, CliContext& ctx, int* exit_code) {
  struct MakeFlags {
    PrewarmFlags target;
    std::string out;
    bool deterministic = false;
  };
  auto flags = std::make_shared<MakeFlags>();
  CLI::App* cmd = pin.add_subcommand(
      "make",
      "Make a pin from the stored records of models and/or shape files, "
      "without running the program: the answers a warm run would get");
  AddPlanFlags(cmd, &flags->target.problems);
  cmd->add_option("--gpu", flags->target.gpu,
                  "GPU whose records to pin: CUDA ordinal or model substring "
                  "(default: the daemon's first)");
  cmd->add_option("--device", flags->target.device,
                  "Device key to pin for instead of asking the daemon");
  cmd->add_flag("--no-progress", flags->target.no_progress,
                "No progress output");
  cmd->add_option("-o,--out", flags->out,
                  "The pin file (merged into if it exists: its answers stay)")
      ->required();
  cmd->add_flag("--deterministic", flags->deterministic,
                "Mark the pin as made for a program that asks for "
                "deterministic algorithms only");
  cmd->callback([&ctx, flags, exit_code] {
    *exit_code = MakePin(ctx, flags->target, flags->out,
                         flags->deterministic);
  });
}

void AddPrewarmCommand(CLI::App& app, CliContext& ctx, int* exit_code) {
  auto flags = std::make_shared<PrewarmFlags>();
  CLI::App* cmd = app.add_subcommand(
      "prewarm",
      "Tune every convolution of models and/or shape files (skips stored "
      "ones; rerun to resume)");
  AddPlanFlags(cmd, &flags->problems);
  AddRunFlags(cmd, flags.get());
  AddFleetFlags(cmd, &flags->fleet);
  cmd->add_flag("--dry-run", flags->dry_run,
                "List the problems that would be tuned; contact no daemon");
  cmd->callback([&ctx, flags, exit_code] {
    *exit_code = RunPrewarmCommand(ctx, *flags);
  });
}

}  // namespace tunedb::tuner
