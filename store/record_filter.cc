// RecordFilter (declared in store/store.h): which records a Query, Delete or
// Export selects.
#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/key_fields.h"
#include "store/store.h"

namespace tunedb {
namespace {

constexpr char kHashField[] = "hash";

}  // namespace

std::optional<uint64_t> RecordFilter::KeyHash() const {
  auto it = fields.find(kHashField);
  uint64_t hash;
  if (it == fields.end() || !absl::SimpleHexAtoi(it->second, &hash)) {
    return std::nullopt;
  }
  return hash;
}

absl::Status RecordFilter::Validate() const {
  const auto& names = KeyFieldNames();
  for (const auto& [name, value] : fields) {
    if (name == kHashField) {
      uint64_t ignored;
      if (value.size() != 16 || !absl::SimpleHexAtoi(value, &ignored)) {
        return absl::InvalidArgumentError(
            absl::StrCat("filter field \"hash\" must be 16 hex digits, got \"",
                         value, "\""));
      }
      continue;
    }
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown filter field \"", name,
          "\"; key fields are: ", absl::StrJoin(names, ", "), ", and hash"));
    }
  }
  if (since_us < 0 || until_us < 0) {
    return absl::InvalidArgumentError(
        "filter time bounds must not be negative (0 means no bound)");
  }
  if (since_us != 0 && until_us != 0 && since_us >= until_us) {
    return absl::InvalidArgumentError(
        absl::StrCat("filter since_us (", since_us,
                     ") must be before until_us (", until_us, ")"));
  }
  return absl::OkStatus();
}

RecordFilter RecordFilter::OfKeyFieldsBut(
    const ProblemKey& key,
    const std::function<bool(const std::string&)>& leave_out) {
  RecordFilter filter;
  absl::StatusOr<std::map<std::string, std::string>> fields =
      KeyFields(key.ToText());
  if (!fields.ok()) return filter;
  const std::string problem = key.problem.ToText();
  bool problem_kept = true;
  for (auto& [name, value] : *fields) {
    if (!leave_out(name)) {
      filter.fields[name] = value;
    } else if (absl::StartsWith(problem, name + "=") ||
               absl::StrContains(problem, " " + name + "=")) {
      problem_kept = false;
    }
  }
  if (problem_kept) filter.problem_text = problem;
  return filter;
}

bool RecordFilter::UsesIndex() const {
  if (KeyHash()) return true;
  for (const std::string& field : IndexedFilterFields()) {
    if (fields.count(field) > 0) return true;
  }
  return false;
}

bool RecordFilter::Matches(const Record& record) const {
  if (since_us != 0 && record.measured_at_us < since_us) return false;
  if (until_us != 0 && record.measured_at_us >= until_us) return false;
  if (!problem_text.empty() && record.key.problem.ToText() != problem_text) {
    return false;
  }
  if (fields.empty()) return true;
  absl::StatusOr<std::map<std::string, std::string>> key_fields =
      KeyFields(record.key.ToText());
  if (!key_fields.ok()) return false;
  for (const auto& [name, value] : fields) {
    if (name == kHashField) {
      if (absl::AsciiStrToLower(value) != record.key.HashText()) return false;
      continue;
    }
    auto it = key_fields->find(name);
    // A legacy-API key has no api field: "api=legacy" matches its absence.
    if (it == key_fields->end()) {
      if (name == "api" && value == ConvApiName(ConvApi::kLegacy)) continue;
      return false;
    }
    if (it->second != value) return false;
  }
  return true;
}

}  // namespace tunedb
