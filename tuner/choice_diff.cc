#include "tuner/choice_diff.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/config_identity.h"
#include "common/version_text.h"

namespace tunedb::tuner {
namespace {

// The key without its cuDNN version: what matches two versions' records.
std::string Unversioned(ProblemKey key) {
  key.device.cudnn_version = 0;
  return key.ToText();
}

std::string GroupOf(const ProblemKey& key) {
  return absl::StrCat(ConvApiName(key.problem.api), " ",
                      ConvOpName(key.problem.op), " ",
                      DataTypeName(key.problem.input_type));
}

}  // namespace

absl::StatusOr<int> ParseCudnnVersionFlag(absl::string_view text) {
  // MAJOR.MINOR is MAJOR.MINOR.0; the major version is 1 to 99.
  const bool no_patch = std::count(text.begin(), text.end(), '.') == 1;
  const absl::StatusOr<int> version =
      ParseCudnnVersion(no_patch ? absl::StrCat(text, ".0") : std::string(text));
  if (!version.ok() || *version < 10000 || *version >= 100 * 10000) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cuDNN version \"", text,
        "\" cannot be read: give MAJOR.MINOR or MAJOR.MINOR.PATCH, e.g. 9.19"));
  }
  return *version;
}

void ChoiceDiff::Add(const std::vector<Record>& from,
                     const std::vector<Record>& to,
                     absl::string_view group_prefix) {
  std::map<std::string, const Record*> old;
  for (const Record& r : from) old[Unversioned(r.key)] = &r;
  for (const Record& r : to) {
    auto it = old.find(Unversioned(r.key));
    if (it == old.end()) {
      ++only_to;
      continue;
    }
    const Record& before = *it->second;
    old.erase(it);
    std::optional<AlgoResult> a = Choose(before, Constraints{});
    std::optional<AlgoResult> b = Choose(r, Constraints{});
    if (!a.has_value() || !b.has_value()) {
      ++without_choice;
      continue;
    }
    KeyChange c;
    c.key = r.key.ToText();
    c.from = *a;
    c.to = *b;
    c.changed = !SameConfig(*a, *b);
    const double to_ms = b->cost(LaunchMode::kDirect).median_ms;
    const double from_ms = a->cost(LaunchMode::kDirect).median_ms;
    c.to_over_from = from_ms > 0 ? to_ms / from_ms : 0;
    for (const AlgoResult& x : r.results) {
      if (x.status == AlgoStatus::kOk && SameConfig(x, *a) && to_ms > 0) {
        c.speedup = x.cost(LaunchMode::kDirect).median_ms / to_ms;
        break;
      }
    }
    groups[absl::StrCat(group_prefix, GroupOf(r.key))].push_back(std::move(c));
  }
  only_from += static_cast<int64_t>(old.size());
}

}  // namespace tunedb::tuner
