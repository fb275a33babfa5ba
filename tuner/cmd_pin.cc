// `tunedb pin make` (cmd_prewarm.cc: it pins a prewarm plan's problems) and
// `tunedb pin show FILE`: a pin's identity and answers, as a table or JSON;
// a pin that cannot be read exits kPinRefusedExitCode with the reason, as
// `tunedb run --pin` would.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/pin_file.h"
#include "nlohmann/json.hpp"
#include "tuner/commands.h"
#include "tuner/exit_codes.h"
#include "tuner/table.h"

namespace tunedb::tuner {
namespace {

int ShowPin(CliContext& ctx, const std::string& path) {
  absl::StatusOr<PinFile> pin = ReadPinFile(path);
  if (!pin.ok()) {
    ctx.err() << "tunedb: error: " << pin.status().message() << "\n";
    return kExitPinRefused;
  }
  if (ctx.json()) {
    // The file is the JSON form: printed as parsed (sorted, checked).
    ctx.out() << FormatPin(*pin);
    return kExitOk;
  }
  PrintKeyValues(
      ctx.out(),
      {{"device", pin->device.ToText()},
       {"driver", pin->driver_version > 0
                      ? CudaVersionText(pin->driver_version)
                      : std::string("not recorded")},
       {"deterministic", pin->deterministic ? "yes" : "no"},
       {"made by", pin->made_by},
       {"answers", absl::StrCat(pin->entries.size())}});
  Table table({"problem", "slot", "source", "algo>", "math", "workspace>"});
  for (const PinEntry& e : pin->entries) {
    const bool none = e.source == PinnedSource::kNone;
    std::string algo = none ? "-" : absl::StrCat(e.answer.algo);
    if (!none && !e.answer.knobs.empty()) {
      absl::StrAppend(&algo, " ", KnobsText(e.answer.knobs));
    }
    table.AddRow({e.problem.ToText(), e.slot.ToText(),
                  std::string(PinnedSourceName(e.source)), algo,
                  none ? "-" : std::string(MathTypeName(e.answer.math_type)),
                  none ? "-" : absl::StrCat(e.answer.workspace_bytes)});
  }
  ctx.out() << "\n";
  table.Print(ctx.out());
  return kExitOk;
}

}  // namespace

void AddPinCommands(CLI::App& app, CliContext& ctx, int* exit_code) {
  CLI::App* pin = app.add_subcommand(
      "pin",
      "Pins: every cuDNN answer of a program in one file, so each later run "
      "gets the same (docs/pins.md; record and follow with `tunedb run "
      "--pin FILE`)");
  pin->require_subcommand(1);
  AddPinMakeCommand(*pin, ctx, exit_code);
  auto path = std::make_shared<std::string>();
  CLI::App* show = pin->add_subcommand(
      "show", "Show a pin's device and answers (--json: the pin, checked)");
  show->add_option("FILE", *path, "The pin file")->required();
  show->callback(
      [&ctx, path, exit_code] { *exit_code = ShowPin(ctx, *path); });
}

}  // namespace tunedb::tuner
