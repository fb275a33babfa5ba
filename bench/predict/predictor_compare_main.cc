// tunedb_predictor_compare: how well each predictor answers keys never
// tuned, judged on stored records (predictor_compare.h).
//
//   tunedb_predictor_compare RECORDS.jsonl... [--neighbours 3] [--json]
//
// RECORDS: `tunedb export` files (decompressed). Prints a table per API and
// data type, or JSON with --json.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "bench/predict/predictor_compare.h"
#include "nlohmann/json.hpp"
#include "store/record_json.h"

namespace {

int Run(const std::vector<std::string>& files, int neighbours, bool json) {
  std::vector<tunedb::Record> records;
  int skipped = 0;
  for (const std::string& file : files) {
    std::ifstream in(file);
    if (!in) {
      std::cerr << "cannot read " << file << "\n";
      return 1;
    }
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      absl::StatusOr<tunedb::Record> r = tunedb::RecordFromJson(line);
      if (r.ok()) {
        records.push_back(*std::move(r));
      } else {
        ++skipped;
      }
    }
  }
  const std::vector<tunedb::GroupScores> groups =
      tunedb::ComparePredictors(records, neighbours);
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& g : groups) {
      nlohmann::json j = {{"group", g.group}, {"tuned_keys", g.tuned}};
      for (const auto& [name, s] : g.by_predictor) {
        j["predictors"][name] = {{"keys", s.keys},
                                 {"fallbacks", s.fallbacks},
                                 {"geomean_ratio", s.geomean_ratio},
                                 {"share_over_5pct", s.share_over_5pct},
                                 {"worst_ratio", s.worst_ratio}};
      }
      out.push_back(j);
    }
    std::cout << out.dump(1) << "\n";
    return 0;
  }
  std::cout << records.size() << " records read";
  if (skipped > 0) std::cout << ", " << skipped << " lines not records";
  std::cout << "\n\n| group | tuned keys | held-out keys | predictor | "
               "geomean vs fastest | > 5 % off | worst | fallbacks |\n"
               "|---|---|---|---|---|---|---|---|\n";
  for (const auto& g : groups) {
    for (const std::string& name : tunedb::PredictorNames()) {
      auto it = g.by_predictor.find(name);
      if (it == g.by_predictor.end()) continue;
      const tunedb::PredictorScore& s = it->second;
      std::cout << absl::StrFormat("| %s | %d | %d | %s | %.4f | %.1f %% | "
                                   "%.2f | %d |\n",
                                   g.group, g.tuned, s.keys, name,
                                   s.geomean_ratio, 100 * s.share_over_5pct,
                                   s.worst_ratio, s.fallbacks);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Predictors of keys never tuned, judged on stored records: within each "
      "family every other key by shape is held out, predicted from the rest, "
      "and timed from its own record"};
  std::vector<std::string> files;
  int neighbours = 3;
  bool json = false;
  app.add_option("records", files, "tunedb export files (JSON lines)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--neighbours", neighbours, "nearest tuned keys that vote")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_flag("--json", json, "print JSON instead of a table");
  CLI11_PARSE(app, argc, argv);
  return Run(files, neighbours, json);
}
