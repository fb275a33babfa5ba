// `tunedb pin make` (cmd_prewarm.cc: it pins a prewarm plan's problems),
// `tunedb pin show FILE`: a pin's identity and answers, as a table or JSON
// (a pin that cannot be read exits kPinRefusedExitCode with the reason, as
// `tunedb run --pin` would), and `tunedb pin seal FILE`: an edited pin's
// answers sealed again.
#include <memory>
#include <string>
#include <vector>

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
  if (const std::string w = UnsealedPinWarning(*pin, path); !w.empty()) {
    ctx.err() << "tunedb: warning: " << w << "\n";
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

// `tunedb pin seal FILE`: the pin's answers sealed as they read now (a
// deliberate edit, or a pin of before digests), each one sealed anew named.
int SealPin(CliContext& ctx, const std::string& path) {
  // A pin that cannot be read but for its digests is refused as pin show
  // refuses it; what fails after that is the write.
  if (absl::StatusOr<PinFile> pin = ReadPinFile(path, PinDigests::kAcceptEdits);
      !pin.ok()) {
    ctx.err() << "tunedb: error: " << pin.status().message()
              << "; nothing was sealed\n";
    return kExitPinRefused;
  }
  absl::StatusOr<std::vector<std::string>> sealed = SealPinFile(path);
  if (!sealed.ok()) {
    ctx.err() << "tunedb: error: the pin " << path
              << " was not sealed: " << sealed.status().message() << "\n";
    return kExitNotWritten;
  }
  if (sealed->empty()) {
    ctx.out() << path << ": every answer was sealed already\n";
    return kExitOk;
  }
  ctx.out() << "sealed " << path << " as it reads now; sealed anew:\n";
  for (const std::string& s : *sealed) ctx.out() << "  " << s << "\n";
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
  auto seal_path = std::make_shared<std::string>();
  CLI::App* seal = pin->add_subcommand(
      "seal",
      "Seal a pin's answers as they read now, after a deliberate edit (a pin "
      "whose answer lines do not match their digests is refused, exit 78)");
  seal->add_option("FILE", *seal_path, "The pin file")->required();
  seal->callback([&ctx, seal_path, exit_code] {
    *exit_code = SealPin(ctx, *seal_path);
  });
}

}  // namespace tunedb::tuner
