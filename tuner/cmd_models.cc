// `tunedb models`: the built-in model shape sets with their layer counts.
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tuner/commands.h"
#include "tuner/exit_codes.h"
#include "tuner/models.h"
#include "tuner/render.h"
#include "tuner/table.h"

namespace tunedb::tuner {
namespace {

// One model built at its own input size or --input's.
struct ModelRow {
  const ModelInfo* model = nullptr;
  std::string input;  // as given, or the built input's text
  std::string error;  // it cannot be built at that size (text only)
  int64_t convs = 0;
  int depthwise = 0;
  int transposed = 0;
  std::string output;  // "512x7x7"
};

std::optional<ModelRow> BuildRow(const ModelInfo& m, const std::string& input) {
  std::vector<int64_t> size;
  if (!input.empty()) {
    auto parsed = ParseInputSize(input, m.spatial_dims);
    if (!parsed.ok()) return std::nullopt;  // e.g. a 2-D size for a 3-D model
    size = *parsed;
  }
  ModelRow row;
  row.model = &m;
  auto built = BuildModel(m, size);
  if (!built.ok()) {
    row.input = input;
    row.error = std::string(built.status().message());
    return row;
  }
  row.input = DimsToText(built->input, m.spatial_dims);
  row.convs = static_cast<int64_t>(built->layers.size());
  for (const ConvLayer& l : built->layers) {
    row.depthwise += l.depthwise() ? 1 : 0;
    row.transposed += l.transposed ? 1 : 0;
  }
  row.output = absl::StrCat(built->output.channels, "x",
                            DimsToText(built->output.spatial, m.spatial_dims));
  return row;
}

std::vector<ModelRow> FetchModels(const std::string& input) {
  std::vector<ModelRow> rows;
  for (const ModelInfo& m : Models()) {
    if (std::optional<ModelRow> row = BuildRow(m, input)) rows.push_back(*row);
  }
  return rows;
}

nlohmann::json ModelsToJson(const std::vector<ModelRow>& rows) {
  nlohmann::json j = nlohmann::json::array();
  for (const ModelRow& r : rows) {
    if (!r.error.empty()) continue;
    j.push_back({{"name", r.model->name},
                 {"input", r.input},
                 {"spatial_dims", r.model->spatial_dims},
                 {"convs", r.convs},
                 {"depthwise", r.depthwise},
                 {"transposed", r.transposed},
                 {"output", r.output},
                 {"description", r.model->description}});
  }
  return j;
}

Table ModelsTable(const std::vector<ModelRow>& rows) {
  Table table({"model", "input", "convs>", "depthwise>", "transposed>",
               "output", "description"});
  for (const ModelRow& r : rows) {
    if (!r.error.empty()) {
      table.AddRow({r.model->name, r.input, "-", "-", "-", "-", r.error});
      continue;
    }
    table.AddRow({r.model->name, r.input, absl::StrCat(r.convs),
                  absl::StrCat(r.depthwise), absl::StrCat(r.transposed),
                  r.output, r.model->description});
  }
  return table;
}

void PrintModels(const std::vector<ModelRow>& rows, std::ostream& out) {
  ModelsTable(rows).Print(out);
}

}  // namespace

void AddModelsCommand(CLI::App& app, CliContext& ctx, int* exit_code) {
  auto input = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "models", "List the built-in model shape sets with their layer counts");
  cmd->add_option("--input", *input, "Build at this input size instead");
  auto csv = std::make_shared<bool>(false);
  cmd->add_flag("--csv", *csv, "CSV with a header row on stdout");
  cmd->callback([&ctx, input, csv, exit_code] {
    Render(ctx, FormOf(ctx, *csv), FetchModels(*input),
           Renderer<std::vector<ModelRow>>{ModelsToJson, PrintModels,
                                           ModelsTable});
    *exit_code = kExitOk;
  });
}

}  // namespace tunedb::tuner
