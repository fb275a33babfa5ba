// `tunedb prewarm`: tune every convolution of built-in models and/or shape
// files, skipping what is stored.
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tuner/commands.h"
#include "tuner/exit_codes.h"
#include "tuner/fleet_prewarm.h"
#include "tuner/format.h"
#include "tuner/interrupt.h"
#include "tuner/models.h"
#include "tuner/prewarm_runner.h"
#include "tuner/progress_bar.h"
#include "tuner/shape_file.h"
#include "tuner/table.h"
#include "tuner/training_problems.h"

namespace tunedb::tuner {
namespace {

struct PrewarmFlags {
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

struct Plan {
  std::vector<PrewarmItem> items;
  int64_t duplicates = 0;
};

// Builds the deduplicated list; returns kExitOk or an exit code after
// printing the errors.
int BuildPlan(CliContext& ctx, const PrewarmFlags& f,
              const std::optional<DeviceKey>& device, Plan* plan) {
  auto combos = ProblemCombinations(f.batches, f.dtypes, f.layouts, f.ops);
  if (!combos.ok()) return ctx.Fail(combos.status());
  absl::StatusOr<ConvApi> api = ParseConvApi(f.api);
  if (!api.ok()) {
    return ctx.Fail(absl::InvalidArgumentError(
        absl::StrCat("--api: ", api.status().message())));
  }
  std::set<std::string> seen;
  absl::Status bad_align;
  auto add = [&](const ConvProblem& p, const DeviceKey& d,
                 const std::string& source) {
    PrewarmItem item;
    item.key.device = d;
    item.key.problem = p;
    if (*api == ConvApi::kGraph && p.api == ConvApi::kLegacy) {
      item.key.problem.api = ConvApi::kGraph;
      item.key.problem.alignment = f.align;
      absl::Status valid = item.key.problem.Validate();
      if (!valid.ok()) {
        if (bad_align.ok()) {
          bad_align = absl::InvalidArgumentError(
              absl::StrCat("--align: ", valid.message(), " (", source, ")"));
        }
        return;
      }
    }
    item.source = source;
    if (!seen.insert(item.key.ToText()).second) {
      ++plan->duplicates;
      return;
    }
    plan->items.push_back(std::move(item));
  };
  const DeviceKey default_device = device.value_or(DeviceKey());
  for (const std::string& name : f.models) {
    auto model = FindModel(name);
    if (!model.ok())
      return ctx.Fail(absl::InvalidArgumentError(
          absl::StrCat("--model: ", model.status().message())));
    std::vector<int64_t> input;
    if (!f.input.empty()) {
      auto parsed = ParseInputSize(f.input, (*model)->spatial_dims);
      if (!parsed.ok()) return ctx.Fail(parsed.status());
      input = *parsed;
    }
    auto built = BuildModel(**model, input);
    if (!built.ok()) return ctx.Fail(built.status());
    for (const ProblemOptions& o : *combos) {
      for (const PlannedProblem& p : LayerProblems(
               built->layers, (*model)->spatial_dims, o, (*model)->name)) {
        add(p.problem, default_device, p.source);
      }
    }
  }
  auto format = ParseShapeFormat(f.format);
  if (!format.ok()) return ctx.Fail(format.status());
  bool bad_input = false;
  for (const std::string& path : f.files) {
    std::ifstream file;
    std::istream* in = &ctx.in();
    if (path != "-") {
      file.open(path);
      if (!file) {
        ctx.err() << "tunedb: error: cannot open shape file '" << path << "'\n";
        return kExitBadInput;
      }
      in = &file;
    }
    // One pass per combination would re-read stdin; read the text once.
    std::string text((std::istreambuf_iterator<char>(*in)),
                     std::istreambuf_iterator<char>());
    for (size_t c = 0; c < combos->size(); ++c) {
      std::istringstream copy(text);
      ShapeFileResult r = ParseShapeFile(path == "-" ? "<stdin>" : path, copy,
                                         *format, (*combos)[c]);
      if (!r.errors.empty()) {
        if (c == 0) {
          for (const std::string& e : r.errors) ctx.err() << e << "\n";
        }
        bad_input = true;
        break;
      }
      for (const ShapeEntry& e : r.entries) {
        add(e.problem, e.device.value_or(default_device), e.source);
      }
      // Key text is complete: other combinations would only repeat it.
      if (!r.uses_defaults) break;
    }
  }
  if (bad_input) {
    ctx.err() << "tunedb: error: bad shape file; nothing was tuned\n";
    return kExitBadInput;
  }
  if (!bad_align.ok()) return ctx.Fail(bad_align);
  return kExitOk;
}

void PrintSummary(CliContext& ctx, const PrewarmSummary& s,
                  int64_t duplicates) {
  if (ctx.json()) {
    nlohmann::json failures = nlohmann::json::array();
    for (const PrewarmFailure& f : s.failures) {
      failures.push_back(
          {{"source", f.source}, {"key", f.key}, {"error", f.error}});
    }
    nlohmann::json j = {{"shapes", s.shapes},
                        {"duplicates_dropped", duplicates},
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
    ctx.out() << j.dump(2) << "\n";
    return;
  }
  ctx.out() << "prewarm summary\n";
  PrintKeyValues(
      ctx.out(),
      {{"  shapes (unique)", absl::StrCat(s.shapes)},
       {"  already stored (skipped)", absl::StrCat(s.already_stored)},
       {"  searches run", absl::StrCat(s.searched)},
       {"  hits (stored meanwhile)", absl::StrCat(s.hits)},
       {"  failures", absl::StrCat(s.failed)},
       {"  not sent (limit/interrupt)", absl::StrCat(s.not_sent)},
       {"  sent but unanswered", absl::StrCat(s.unanswered)},
       {"  search time spent", FormatSeconds(s.search_ms_spent / 1000)},
       {"  search time saved per later process",
        FormatSeconds(s.search_ms_saved / 1000)}});
  for (size_t i = 0; i < s.failures.size() && i < 10; ++i) {
    ctx.err() << "failed: " << s.failures[i].source << ": "
              << s.failures[i].error << "\n";
  }
  if (s.failures.size() > 10) {
    ctx.err() << "... and " << s.failures.size() - 10
              << " more failures (use --json to see all)\n";
  }
}

int RunDryRun(CliContext& ctx, const Plan& plan) {
  if (ctx.json()) {
    nlohmann::json j = nlohmann::json::array();
    for (const PrewarmItem& item : plan.items) {
      j.push_back(
          {{"source", item.source}, {"problem", item.key.problem.ToText()}});
    }
    ctx.out() << j.dump(2) << "\n";
    return kExitOk;
  }
  Table table({"source", "op", "shape", "type", "layout"});
  for (const PrewarmItem& item : plan.items) {
    const ConvProblem& p = item.key.problem;
    table.AddRow({item.source, std::string(ConvOpName(p.op)), ShapeSummary(p),
                  TypeSummary(p), std::string(LayoutName(p.layout))});
  }
  table.Print(ctx.out());
  ctx.out() << plan.items.size() << " unique problems (" << plan.duplicates
            << " duplicates dropped)\n";
  return kExitOk;
}

int RunPrewarmCommand(CliContext& ctx, const PrewarmFlags& f) {
  if (f.models.empty() && f.files.empty()) {
    ctx.err() << "tunedb: error: give --model NAME and/or --file PATH "
                 "(see `tunedb models`)\n";
    return kExitUsage;
  }
  std::optional<DeviceKey> device;
  int gpus = 1;
  if (!f.device.empty()) {
    auto parsed = DeviceKey::Parse(f.device);
    if (!parsed.ok()) {
      return ctx.Fail(absl::InvalidArgumentError(
          absl::StrCat("--device: ", parsed.status().message())));
    }
    device = *parsed;
  } else if (!f.dry_run) {
    auto resolved = ctx.ResolveDevice(f.gpu, &gpus);
    if (!resolved.ok()) return ctx.Fail(resolved.status());
    device = *resolved;
  }
  Plan plan;
  if (int code = BuildPlan(ctx, f, device, &plan); code != kExitOk) return code;
  if (f.dry_run) return RunDryRun(ctx, plan);
  if (!f.fleet.url.empty()) {
    std::vector<ProblemKey> keys;
    for (const PrewarmItem& item : plan.items) keys.push_back(item.key);
    if (f.limit > 0 && static_cast<int64_t>(keys.size()) > f.limit) {
      keys.resize(f.limit);
    }
    ctx.err() << keys.size() << " unique problems (" << plan.duplicates
              << " duplicates dropped) for " << device->gpu_model
              << " to the fleet\n";
    FleetPrewarmFlags fleet = f.fleet;
    fleet.progress = !f.no_progress;
    ScopedSigintHandler sigint(ctx.io().handle_signals);
    return RunFleetPrewarm(ctx, fleet, keys);
  }

  ctx.err() << plan.items.size() << " unique problems (" << plan.duplicates
            << " duplicates dropped) for " << device->gpu_model << " (" << gpus
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
  PrintSummary(ctx, *summary, plan.duplicates);
  if (!summary->stream_status.ok()) return ctx.Fail(summary->stream_status);
  if (summary->interrupted) {
    ctx.err() << "interrupted: rerun the same command to resume (stored "
                 "results are skipped)\n";
    return kExitInterrupted;
  }
  return summary->failed > 0 ? kExitPartial : kExitOk;
}

}  // namespace

void AddPrewarmCommand(CLI::App& app, CliContext& ctx, int* exit_code) {
  auto flags = std::make_shared<PrewarmFlags>();
  CLI::App* cmd = app.add_subcommand(
      "prewarm",
      "Tune every convolution of models and/or shape files (skips stored "
      "ones; rerun to resume)");
  cmd->add_option("-m,--model", flags->models,
                  "Built-in model (repeatable; see `tunedb models`)");
  cmd->add_option("--file", flags->files,
                  "Shape file: JSON lines, CSV or key text; '-' = stdin "
                  "(repeatable; see docs/shape-files.md)");
  cmd->add_option("--format", flags->format,
                  "Shape file format: auto, jsonl, csv, text")
      ->capture_default_str();
  cmd->add_option("-b,--batch", flags->batches, "Batch size(s), e.g. 32,64")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--dtype", flags->dtypes,
                  "fp32, fp32-no-tf32, fp16, bf16 (comma list allowed)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option(
         "--layout", flags->layouts,
         "nchw or nhwc (3-D models use ncdhw/ndhwc); comma list allowed")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--input", flags->input,
                  "Input size for models: 224, 256x320, 16x112x112 (default: "
                  "the model's)");
  cmd->add_option("--ops", flags->ops,
                  "Passes: fwd,bwd_data,bwd_filter (the first conv of a model "
                  "gets no bwd_data)")
      ->capture_default_str();
  cmd->add_option("--api", flags->api,
                  "cuDNN API to tune for: legacy (algorithms) or graph "
                  "(engine configs and execution plans)")
      ->check(CLI::IsMember({"legacy", "graph"}))
      ->capture_default_str();
  cmd->add_option("--align", flags->align,
                  "Graph API: operand pointer alignment in bytes (a power of "
                  "two from the element size to 16)")
      ->check(CLI::IsMember({1, 2, 4, 8, 16}))
      ->capture_default_str();
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
  cmd->add_option("--fleet", flags->fleet.url,
                  "Fleet database URL: queue the problems as fleet jobs that "
                  "every daemon serving the device runs, and show fleet-wide "
                  "progress (docs/fleet.md); rerun to resume");
  cmd->add_option("--fleet-password-file", flags->fleet.password_file,
                  "libpq password file for --fleet");
  cmd->add_option("--fleet-batch", flags->fleet.batch,
                  "Name of the fleet batch (default: named after its "
                  "problems, so the same command resumes it)");
  cmd->add_flag("!--no-wait", flags->fleet.wait,
                "With --fleet: queue the jobs and return without waiting");
  cmd->add_flag("--dry-run", flags->dry_run,
                "List the problems that would be tuned; contact no daemon");
  cmd->callback([&ctx, flags, exit_code] {
    *exit_code = RunPrewarmCommand(ctx, *flags);
  });
}

}  // namespace tunedb::tuner
