#include "bench/regret/choice_pairs.h"

#include <fstream>
#include <map>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "store/record_json.h"

namespace tunedb::regret {
namespace {

// Every record of an export file, in its order; blank lines skipped.
absl::StatusOr<std::vector<Record>> ReadExport(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::vector<Record> records;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    absl::StatusOr<Record> r = RecordFromJson(line);
    if (!r.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", number, ": ", r.status().message()));
    }
    records.push_back(*std::move(r));
  }
  return records;
}

}  // namespace

absl::StatusOr<ChoicePairs> ReadChoicePairs(const std::string& judged_path,
                                            const std::string& reference_path,
                                            int cudnn_version) {
  absl::StatusOr<std::vector<Record>> judged = ReadExport(judged_path);
  if (!judged.ok()) return judged.status();
  absl::StatusOr<std::vector<Record>> reference = ReadExport(reference_path);
  if (!reference.ok()) return reference.status();
  std::map<std::string, const Record*> by_key;
  for (const Record& r : *reference) by_key[r.key.ToText()] = &r;
  ChoicePairs out;
  for (const Record& r : *judged) {
    if (cudnn_version != 0 && r.key.device.cudnn_version != cudnn_version) {
      ++out.other_version;
      continue;
    }
    auto it = by_key.find(r.key.ToText());
    if (it == by_key.end()) {
      ++out.unmatched;
      continue;
    }
    std::optional<AlgoResult> a = Choose(r, Constraints());
    std::optional<AlgoResult> b = Choose(*it->second, Constraints());
    if (!a.has_value() || !b.has_value()) {
      ++out.no_choice;
      continue;
    }
    out.pairs.push_back({r.key, *std::move(a), *std::move(b)});
  }
  return out;
}

AgreementSummary SummarizeAgreement(const std::vector<double>& ratios,
                                    int same_config) {
  AgreementSummary s;
  s.ratios = SummarizeRatios(ratios);
  s.same_config = same_config;
  for (double r : ratios) {
    if (r <= 1 + kAgreementTolerance) ++s.within_tolerance;
  }
  return s;
}

}  // namespace tunedb::regret
