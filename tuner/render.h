// Render: how a command prints what it fetched. A command first gets what it
// shows as a value (a plain struct or a daemon response), then Render prints
// that value in the output form the flags ask for, with a Renderer that says
// how the value looks in each: --json (the value as JSON), --csv (a Table for
// scripts) or, by default, text for people (tables, "name  value" listings).
// The command decides what is shown, the renderer how; only Render writes
// the chosen form to stdout.
//
// Thread safety: Render writes to ctx.out(); call it from one thread.
#ifndef TUNEDB_TUNER_RENDER_H_
#define TUNEDB_TUNER_RENDER_H_

#include <ostream>

#include "nlohmann/json.hpp"
#include "tuner/cli_context.h"
#include "tuner/table.h"

namespace tunedb::tuner {

enum class OutputForm { kText, kJson, kCsv };

// --json, else --csv (a command's own flag, where it has one), else text.
OutputForm FormOf(const CliContext& ctx, bool csv = false);

// How values of type T look in each form. `csv` is needed only by commands
// with a --csv flag.
template <typename T>
struct Renderer {
  nlohmann::json (*json)(const T&) = nullptr;
  void (*text)(const T&, std::ostream&) = nullptr;
  Table (*csv)(const T&) = nullptr;
};

// JSON as every command prints it: indented by two, then a newline.
void PrintJson(std::ostream& out, const nlohmann::json& j);

template <typename T>
void Render(CliContext& ctx, OutputForm form, const T& value,
            const Renderer<T>& renderer) {
  switch (form) {
    case OutputForm::kJson:
      PrintJson(ctx.out(), renderer.json(value));
      return;
    case OutputForm::kCsv:
      renderer.csv(value).PrintCsv(ctx.out());
      return;
    case OutputForm::kText:
      renderer.text(value, ctx.out());
      return;
  }
}

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_RENDER_H_
