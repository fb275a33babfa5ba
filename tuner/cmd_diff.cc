// `tunedb diff --from VERSION --to VERSION [--model NAME...]`: which stored
// choices changed from one cuDNN version to another, and by how much
// (ChoiceDiff), per API, pass and data type (per model too with --model:
// only the models' layers, ModelMatcher), as a table or --json. Records of
// either version are only read.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/median.h"
#include "nlohmann/json.hpp"
#include "tuner/choice_diff.h"
#include "tuner/commands.h"
#include "tuner/exit_codes.h"
#include "tuner/filter_flags.h"
#include "tuner/model_matcher.h"
#include "tuner/record_stream.h"
#include "tuner/table.h"

namespace tunedb::tuner {
namespace {

struct DiffFlags {
  std::string from, to;
  FilterFlags filter;
  bool keys = false;  // list every changed key
  std::vector<std::string> models;  // --model: per model, its layers only
  std::string input;                 // --input: their input size
};

// The records of `records` that are layers of model `name`.
std::vector<Record> OfModel(const std::vector<Record>& records,
                            const ModelMatcher& models,
                            const std::string& name) {
  std::vector<Record> kept;
  for (const Record& r : records) {
    const std::vector<std::string> of = models.ModelsOf(r.key.problem);
    if (std::find(of.begin(), of.end(), name) != of.end()) kept.push_back(r);
  }
  return kept;
}

// The records of cuDNN `version` that `f`'s filter keeps.
absl::StatusOr<std::vector<Record>> RecordsOf(CliContext& ctx,
                                              const DiffFlags& f,
                                              int version) {
  absl::StatusOr<v1::Filter> filter = BuildFilter(
      f.filter, {absl::StrCat("cudnn=", CudnnVersionText(version))},
      absl::Now());
  if (!filter.ok()) return filter.status();
  return RecordsMatching(ctx, *filter);
}

std::string ConfigText(const AlgoResult& r) {
  return r.knobs.empty() ? absl::StrCat(r.algo)
                         : absl::StrCat(r.algo, " ", KnobsText(r.knobs));
}

nlohmann::json DiffJson(const ChoiceDiff& d, bool keys) {
  nlohmann::json j;
  j["only_from"] = d.only_from;
  j["only_to"] = d.only_to;
  j["without_choice"] = d.without_choice;
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& [name, changes] : d.groups) {
    nlohmann::json g;
    g["group"] = name;
    g["keys"] = changes.size();
    std::vector<double> speedups;
    nlohmann::json changed = nlohmann::json::array();
    for (const KeyChange& c : changes) {
      if (!c.changed) continue;
      if (c.speedup) speedups.push_back(*c.speedup);
      nlohmann::json k;
      k["key"] = c.key;
      k["from"] = ConfigText(c.from);
      k["to"] = ConfigText(c.to);
      if (c.speedup) k["speedup"] = *c.speedup;
      k["to_over_from"] = c.to_over_from;
      changed.push_back(k);
    }
    g["changed"] = changed.size();
    g["median_speedup_of_changed"] = Median(speedups);
    if (keys) g["changed_keys"] = changed;
    groups.push_back(g);
  }
  j["groups"] = groups;
  return j;
}

void PrintDiff(CliContext& ctx, const ChoiceDiff& d, const DiffFlags& f) {
  Table t({"group", "keys>", "same>", "changed>", "speedup of changed>"});
  for (const auto& [name, changes] : d.groups) {
    int64_t changed = 0;
    std::vector<double> speedups;
    for (const KeyChange& c : changes) {
      if (!c.changed) continue;
      ++changed;
      if (c.speedup) speedups.push_back(*c.speedup);
    }
    t.AddRow({name, absl::StrCat(changes.size()),
              absl::StrCat(changes.size() - changed), absl::StrCat(changed),
              speedups.empty() ? "-"
                               : absl::StrFormat("%.3fx", Median(speedups))});
  }
  t.Print(ctx.out());
  ctx.out() << "\nkeys only in " << f.from << ": " << d.only_from
            << "; only in " << f.to << ": " << d.only_to
            << "; in both without an OK result on one side: "
            << d.without_choice << "\n"
            << "speedup: the old choice re-timed on " << f.to
            << " over the new choice (median of the changed keys whose new "
               "record timed the old choice)\n";
  if (!f.keys) return;
  Table k({"key", "from", "to", "speedup>"});
  for (const auto& [name, changes] : d.groups) {
    for (const KeyChange& c : changes) {
      if (!c.changed) continue;
      k.AddRow({c.key, ConfigText(c.from), ConfigText(c.to),
                c.speedup ? absl::StrFormat("%.3fx", *c.speedup) : "-"});
    }
  }
  ctx.out() << "\n";
  k.Print(ctx.out());
}

int RunDiff(CliContext& ctx, const DiffFlags& f) {
  absl::StatusOr<int> from = ParseCudnnVersionFlag(f.from);
  if (!from.ok()) return ctx.Fail(from.status());
  absl::StatusOr<int> to = ParseCudnnVersionFlag(f.to);
  if (!to.ok()) return ctx.Fail(to.status());
  absl::StatusOr<std::vector<Record>> old_records = RecordsOf(ctx, f, *from);
  if (!old_records.ok()) return ctx.Fail(old_records.status());
  absl::StatusOr<std::vector<Record>> new_records = RecordsOf(ctx, f, *to);
  if (!new_records.ok()) return ctx.Fail(new_records.status());
  absl::StatusOr<ModelMatcher> models = ModelMatcher::Create(f.models, f.input);
  if (!models.ok()) return ctx.Fail(models.status());
  ChoiceDiff d;
  if (models->empty()) {
    d.Add(*old_records, *new_records);
  }
  for (const std::string& name : models->names()) {
    d.Add(OfModel(*old_records, *models, name),
          OfModel(*new_records, *models, name), name + " ");
  }
  if (ctx.json()) {
    ctx.out() << DiffJson(d, f.keys).dump(1) << "\n";
  } else {
    PrintDiff(ctx, d, f);
  }
  return kExitOk;
}

}  // namespace

void AddDiffCommand(CLI::App& app, CliContext& ctx, int* exit_code) {
  auto flags = std::make_shared<DiffFlags>();
  CLI::App* cmd = app.add_subcommand(
      "diff",
      "Which stored choices changed between two cuDNN versions, and by how "
      "much (records of both are only read)");
  cmd->add_option("--from", flags->from, "The old cuDNN version, e.g. 9.14")
      ->required();
  cmd->add_option("--to", flags->to, "The new cuDNN version, e.g. 9.19")
      ->required();
  cmd->add_flag("--keys", flags->keys, "Also list every changed key");
  AddModelFlags(cmd, &flags->models, &flags->input);
  AddFilterFlags(cmd, &flags->filter);
  cmd->callback(
      [&ctx, flags, exit_code] { *exit_code = RunDiff(ctx, *flags); });
}

}  // namespace tunedb::tuner
