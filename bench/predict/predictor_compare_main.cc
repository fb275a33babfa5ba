// tunedb_predictor_compare: how well each predictor answers keys never
// tuned, judged on stored records (predictor_compare.h).
//
//   tunedb_predictor_compare RECORDS.jsonl... [--neighbours 3]
//       [--repeat OTHER.jsonl] [--json]
//   tunedb_predictor_compare --versions SOURCE.jsonl TARGET.jsonl
//       [--compile-horizon 10000] [--no-stored-plans] [--json]
//
// RECORDS: `tunedb export` files (decompressed). Prints a table per API and
// data type, or JSON with --json. With --versions, the old choices the
// daemon serves after a cuDNN upgrade (SOURCE: the old version's records,
// TARGET: the new one's) instead (CompareVersions). With --repeat, another
// search of the same keys: its choices, judged on RECORDS, are the floor
// of what these records can tell apart ("another search").
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "bench/predict/predictor_compare.h"
#include "bench/record_file.h"
#include "nlohmann/json.hpp"
#include "store/record_json.h"

namespace {

nlohmann::json GroupsJson(const std::vector<tunedb::GroupScores>& groups,
                          const std::string& count_name) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& g : groups) {
    nlohmann::json j = {{"group", g.group}, {count_name, g.tuned}};
    for (const auto& [name, s] : g.by_predictor) {
      j["predictors"][name] = {{"keys", s.keys},
                               {"fallbacks", s.fallbacks},
                               {"geomean_ratio", s.geomean_ratio},
                               {"share_over_5pct", s.share_over_5pct},
                               {"worst_ratio", s.worst_ratio}};
    }
    out.push_back(j);
  }
  return out;
}

// A markdown table of `groups`' predictors `names`, in that order;
// `count_header` names the column of GroupScores::tuned, `keys_header`
// that of the judged keys.
void PrintTable(const std::vector<tunedb::GroupScores>& groups,
                const std::vector<std::string>& names,
                const std::string& count_header,
                const std::string& keys_header) {
  std::cout << "| group | " << count_header << " | " << keys_header
            << " | predictor | geomean vs fastest | > 5 % off | worst | "
               "fallbacks |\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& g : groups) {
    for (const std::string& name : names) {
      auto it = g.by_predictor.find(name);
      if (it == g.by_predictor.end()) continue;
      const tunedb::PredictorScore& s = it->second;
      std::cout << absl::StrFormat(
          "| %s | %d | %d | %s | %.4f | %.1f %% | "
          "%.2f | %d |\n",
          g.group, g.tuned, s.keys, name, s.geomean_ratio,
          100 * s.share_over_5pct, s.worst_ratio, s.fallbacks);
    }
  }
}

void PrintRead(size_t records, int skipped) {
  std::cout << records << " records read";
  if (skipped > 0) std::cout << ", " << skipped << " lines not records";
}

int RunPredictors(const std::vector<std::string>& files,
                  const std::string& repeat_file, int neighbours, bool json) {
  std::vector<tunedb::Record> records, repeat;
  int skipped = 0;
  if (!tunedb::bench::ReadRecordFiles(files, &records, &skipped)) return 1;
  if (!repeat_file.empty() &&
      !tunedb::bench::ReadRecordFiles({repeat_file}, &repeat, &skipped)) {
    return 1;
  }
  const std::vector<tunedb::GroupScores> groups =
      tunedb::ComparePredictors(records, neighbours, repeat);
  if (json) {
    std::cout << GroupsJson(groups, "tuned_keys").dump(1) << "\n";
    return 0;
  }
  PrintRead(records.size(), skipped);
  if (!repeat.empty()) {
    std::cout << " (and " << repeat.size() << " of another search)";
  }
  std::cout << "\n\n";
  PrintTable(groups, tunedb::PredictorNames(), "tuned keys", "held-out keys");
  return 0;
}

int RunVersions(const std::vector<std::string>& files,
                const tunedb::Constraints& caller, bool json) {
  std::vector<tunedb::Record> source, target;
  int skipped = 0;
  if (!tunedb::bench::ReadRecordFiles({files[0]}, &source, &skipped) ||
      !tunedb::bench::ReadRecordFiles({files[1]}, &target, &skipped)) {
    return 1;
  }
  const tunedb::VersionComparison c =
      tunedb::CompareVersions(source, target, caller);
  if (json) {
    nlohmann::json out = {
        {"source_keys", source.size()},
        {"target_keys", c.target_keys},
        {"held_by_source", c.held_by_source},
        {"not_judged", c.not_judged},
        {"old_choice_faster", c.old_choice_faster},
        {"heuristic_faster", c.heuristic_faster},
        {"compile_horizon_calls", caller.compile_horizon_calls},
        {"loads_stored_plans", caller.loads_stored_plans},
        {"groups", GroupsJson(c.groups, "held_keys")}};
    std::cout << out.dump(1) << "\n";
    return 0;
  }
  PrintRead(source.size() + target.size(), skipped);
  std::cout << absl::StrFormat(
      " (%d source, %d target); %d target keys held by the source, %d of "
      "them not judged (no steady time for the fastest or the heuristic's "
      "pick)\ncompile horizon %d calls; a tuned key's plans %s\n"
      "more than 5 %% faster than the other: the old choice on %d keys, "
      "the heuristic's pick on %d\n\n",
      source.size(), target.size(), c.held_by_source, c.not_judged,
      caller.compile_horizon_calls,
      caller.loads_stored_plans ? "loaded" : "built", c.old_choice_faster,
      c.heuristic_faster);
  PrintTable(c.groups, tunedb::VersionPredictorNames(), "keys held",
             "judged keys");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Predictors of keys never tuned, judged on stored records: within each "
      "family every other key by shape is held out, predicted from the rest, "
      "and timed from its own record. With --versions, the old version's "
      "choices served after a cuDNN upgrade, timed from the new version's "
      "records"};
  std::vector<std::string> files, versions;
  std::string repeat;
  int neighbours = 3;
  bool json = false;
  CLI::Option* records =
      app.add_option("records", files, "tunedb export files (JSON lines)")
          ->check(CLI::ExistingFile);
  app.add_option("--versions", versions,
                 "SOURCE TARGET: export files of one cuDNN version each; "
                 "the source's choices predict the target's keys")
      ->expected(2)
      ->check(CLI::ExistingFile)
      ->excludes(records);
  // The preload's defaults (preload_options.h).
  tunedb::Constraints caller;
  caller.loads_stored_plans = true;
  bool no_stored_plans = false;
  app.add_option("--compile-horizon", caller.compile_horizon_calls,
                 "--versions: calls over which a runtime-compiled engine's "
                 "build is repaid (0: not weighed), as the preload's "
                 "TUNEDB_PRELOAD_COMPILE_HORIZON")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_flag("--no-stored-plans", no_stored_plans,
               "--versions: the tuned key's caller builds its plans instead "
               "of loading them (TUNEDB_PRELOAD_STORED_PLANS=off)");
  app.add_option("--neighbours", neighbours, "nearest tuned keys that vote")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--repeat", repeat,
                 "export of another search of the same keys: its choices, "
                 "judged on RECORDS, as the row \"another search\" (what "
                 "these records can tell apart)")
      ->check(CLI::ExistingFile)
      ->excludes("--versions");
  app.add_flag("--json", json, "print JSON instead of a table");
  CLI11_PARSE(app, argc, argv);
  caller.loads_stored_plans = !no_stored_plans;
  if (!versions.empty()) return RunVersions(versions, caller, json);
  if (files.empty()) {
    std::cerr << "give RECORDS or --versions SOURCE TARGET (see --help)\n";
    return 2;
  }
  return RunPredictors(files, repeat, neighbours, json);
}
