#include "tuner/problem_plan.h"

#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tuner/exit_codes.h"
#include "tuner/models.h"
#include "tuner/shape_file.h"
#include "tuner/training_problems.h"

namespace tunedb::tuner {
namespace {

// Collects the plan, dropping repeats; remembers the first --align that
// does not fit a graph problem.
class PlanCollector {
 public:
  PlanCollector(ConvApi api, int align) : api_(api), align_(align) {}

  void Add(const ConvProblem& problem, const DeviceKey& device,
           const std::string& source);
  const absl::Status& bad_align() const { return bad_align_; }
  ProblemPlan& plan() { return plan_; }

 private:
  const ConvApi api_;
  const int align_;
  std::set<std::string> seen_;
  absl::Status bad_align_;
  ProblemPlan plan_;
};

void PlanCollector::Add(const ConvProblem& problem, const DeviceKey& device,
                        const std::string& source) {
  PrewarmItem item;
  item.key.device = device;
  item.key.problem = problem;
  if (api_ == ConvApi::kGraph && problem.api == ConvApi::kLegacy) {
    item.key.problem.api = ConvApi::kGraph;
    item.key.problem.alignment = align_;
    absl::Status valid = item.key.problem.Validate();
    if (!valid.ok()) {
      if (bad_align_.ok()) {
        bad_align_ = absl::InvalidArgumentError(
            absl::StrCat("--align: ", valid.message(), " (", source, ")"));
      }
      return;
    }
  }
  item.source = source;
  if (!seen_.insert(item.key.ToText()).second) {
    ++plan_.duplicates;
    return;
  }
  plan_.items.push_back(std::move(item));
}

absl::Status AddModels(const ProblemFlags& flags,
                       const std::vector<ProblemOptions>& combos,
                       const DeviceKey& device, PlanCollector& out) {
  for (const std::string& name : flags.models) {
    absl::StatusOr<BuiltModel> built = BuildModelFlag(name, flags.input);
    if (!built.ok()) return built.status();
    const ModelInfo& model = *built->info;
    for (const ProblemOptions& o : combos) {
      for (const PlannedProblem& p :
           LayerProblems(built->layers, model.spatial_dims, o, model.name)) {
        out.Add(p.problem, device, p.source);
      }
    }
  }
  return absl::OkStatus();
}

// One shape file's entries under every combination it leaves open; false
// (errors printed) if it has bad lines.
bool AddShapeText(CliContext& ctx, const std::string& name,
                  const std::string& text, ShapeFormat format,
                  const std::vector<ProblemOptions>& combos,
                  const DeviceKey& device, PlanCollector& out) {
  for (size_t c = 0; c < combos.size(); ++c) {
    std::istringstream copy(text);
    ShapeFileResult r = ParseShapeFile(name, copy, format, combos[c]);
    if (!r.errors.empty()) {
      for (const std::string& e : r.errors) ctx.err() << e << "\n";
      return false;
    }
    for (const ShapeEntry& e : r.entries) {
      out.Add(e.problem, e.device.value_or(device), e.source);
    }
    // Key text is complete: other combinations would only repeat it.
    if (!r.uses_defaults) break;
  }
  return true;
}

int AddShapeFiles(CliContext& ctx, const ProblemFlags& flags,
                  const std::vector<ProblemOptions>& combos,
                  const DeviceKey& device, PlanCollector& out) {
  auto format = ParseShapeFormat(flags.format);
  if (!format.ok()) return ctx.Fail(format.status());
  bool bad_input = false;
  for (const std::string& path : flags.files) {
    std::ifstream file;
    std::istream* in = &ctx.in();
    if (path != "-") {
      file.open(path);
      if (!file) {
        ctx.err() << "tunedb: error: cannot open shape file '" << path
                  << "'\n";
        return kExitBadInput;
      }
      in = &file;
    }
    // One pass per combination would re-read stdin; read the text once.
    const std::string text((std::istreambuf_iterator<char>(*in)),
                           std::istreambuf_iterator<char>());
    if (!AddShapeText(ctx, path == "-" ? "<stdin>" : path, text, *format,
                      combos, device, out)) {
      bad_input = true;
    }
  }
  if (bad_input) {
    ctx.err() << "tunedb: error: bad shape file\n";
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace

void AddPlanFlags(CLI::App* cmd, ProblemFlags* flags) {
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
                  "cuDNN API: legacy (algorithms) or graph (engine configs "
                  "and execution plans)")
      ->check(CLI::IsMember({"legacy", "graph"}))
      ->capture_default_str();
  cmd->add_option("--align", flags->align,
                  "Graph API: operand pointer alignment in bytes (a power of "
                  "two from the element size to 16)")
      ->check(CLI::IsMember({1, 2, 4, 8, 16}))
      ->capture_default_str();
}

int BuildProblemPlan(CliContext& ctx, const ProblemFlags& flags,
                     const DeviceKey& device, ProblemPlan* plan) {
  auto combos = ProblemCombinations(flags.batches, flags.dtypes,
                                    flags.layouts, flags.ops);
  if (!combos.ok()) return ctx.Fail(combos.status());
  absl::StatusOr<ConvApi> api = ParseConvApi(flags.api);
  if (!api.ok()) {
    return ctx.Fail(absl::InvalidArgumentError(
        absl::StrCat("--api: ", api.status().message())));
  }
  PlanCollector collector(*api, flags.align);
  if (absl::Status s = AddModels(flags, *combos, device, collector); !s.ok()) {
    return ctx.Fail(s);
  }
  if (int code = AddShapeFiles(ctx, flags, *combos, device, collector);
      code != kExitOk) {
    return code;
  }
  if (!collector.bad_align().ok()) return ctx.Fail(collector.bad_align());
  *plan = std::move(collector.plan());
  return kExitOk;
}

}  // namespace tunedb::tuner
