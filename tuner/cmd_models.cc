// `tunedb models`: the built-in model shape sets with their layer counts.
#include <memory>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tuner/commands.h"
#include "tuner/exit_codes.h"
#include "tuner/models.h"
#include "tuner/table.h"

namespace tunedb::tuner {

void AddModelsCommand(CLI::App& app, CliContext& ctx, int* exit_code) {
  auto input = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "models", "List the built-in model shape sets with their layer counts");
  cmd->add_option("--input", *input, "Build at this input size instead");
  auto csv = std::make_shared<bool>(false);
  cmd->add_flag("--csv", *csv, "CSV with a header row on stdout");
  cmd->callback([&ctx, input, csv, exit_code] {
    nlohmann::json rows = nlohmann::json::array();
    Table table({"model", "input", "convs>", "depthwise>", "transposed>",
                 "output", "description"});
    for (const ModelInfo& m : Models()) {
      std::vector<int64_t> size;
      if (!input->empty()) {
        auto parsed = ParseInputSize(*input, m.spatial_dims);
        if (!parsed.ok()) continue;  // e.g. a 2-D size for a 3-D model
        size = *parsed;
      }
      auto built = BuildModel(m, size);
      if (!built.ok()) {
        table.AddRow({m.name, *input, "-", "-", "-", "-",
                      std::string(built.status().message())});
        continue;
      }
      int depthwise = 0, transposed = 0;
      for (const ConvLayer& l : built->layers) {
        depthwise += l.depthwise() ? 1 : 0;
        transposed += l.transposed ? 1 : 0;
      }
      const std::string output =
          absl::StrCat(built->output.channels, "x",
                       DimsToText(built->output.spatial, m.spatial_dims));
      table.AddRow({m.name, DimsToText(built->input, m.spatial_dims),
                    absl::StrCat(built->layers.size()), absl::StrCat(depthwise),
                    absl::StrCat(transposed), output, m.description});
      rows.push_back({{"name", m.name},
                      {"input", DimsToText(built->input, m.spatial_dims)},
                      {"spatial_dims", m.spatial_dims},
                      {"convs", built->layers.size()},
                      {"depthwise", depthwise},
                      {"transposed", transposed},
                      {"output", output},
                      {"description", m.description}});
    }
    if (ctx.json()) {
      ctx.out() << rows.dump(2) << "\n";
    } else {
      if (*csv) {
        table.PrintCsv(ctx.out());
      } else {
        table.Print(ctx.out());
      }
    }
    *exit_code = kExitOk;
  });
}

}  // namespace tunedb::tuner
