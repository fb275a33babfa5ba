#include "common/sealed_plan.h"

#include <cstdint>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/valid_key.h"

namespace tunedb {
namespace {

uint64_t Digest(const ProblemKey& key, int engine,
                const std::vector<Knob>& knobs, absl::string_view plan) {
  const std::string head =
      absl::StrCat(key.ToText(), "\n", engine, "\n", KnobsText(knobs), "\n");
  return Fnv1aExtend(KeyTextHash(head), plan);
}

}  // namespace

std::string SealPlan(const ProblemKey& key, int engine,
                     const std::vector<Knob>& knobs, absl::string_view plan) {
  return absl::StrCat(kSealedPlanMagic, plan.size(), " ",
                      KeyHashText(Digest(key, engine, knobs, plan)), "\n",
                      plan);
}

absl::StatusOr<absl::string_view> OpenSealedPlan(
    absl::string_view sealed, const ProblemKey& key, int engine,
    const std::vector<Knob>& knobs) {
  if (!absl::StartsWith(sealed, kSealedPlanMagic)) {
    return absl::InvalidArgumentError("not a sealed plan");
  }
  const size_t eol = sealed.find('\n');
  if (eol == absl::string_view::npos || eol > 64) {
    return absl::DataLossError("sealed plan: no header line");
  }
  const absl::string_view header =
      sealed.substr(kSealedPlanMagic.size(), eol - kSealedPlanMagic.size());
  const size_t space = header.find(' ');
  uint64_t bytes = 0;
  if (space == absl::string_view::npos ||
      !absl::SimpleAtoi(header.substr(0, space), &bytes) ||
      header.size() - space - 1 != 16) {
    return absl::DataLossError("sealed plan: header damaged");
  }
  const absl::string_view plan = sealed.substr(eol + 1);
  if (plan.size() != bytes) {
    return absl::DataLossError(absl::StrFormat(
        "sealed plan: %d bytes where %d were sealed", plan.size(), bytes));
  }
  const std::string want = KeyHashText(Digest(key, engine, knobs, plan));
  if (header.substr(space + 1) != want) {
    return absl::FailedPreconditionError(
        absl::StrCat("sealed plan: digest ", header.substr(space + 1),
                     " is not ", want, " (edited, or sealed for another key "
                     "or engine config than engine ", engine, " of ",
                     key.ToText(), ")"));
  }
  return plan;
}

void SealPlans(const ProblemKey& key, std::vector<AlgoResult>& results) {
  for (AlgoResult& r : results) {
    if (r.plan.empty() || absl::StartsWith(r.plan, kSealedPlanMagic)) continue;
    r.plan = SealPlan(key, r.algo, r.knobs, r.plan);
  }
}

absl::Status UnsealPlan(const ProblemKey& key, AlgoResult& r) {
  if (r.plan.empty()) return absl::OkStatus();
  absl::StatusOr<absl::string_view> plan =
      OpenSealedPlan(r.plan, key, r.algo, r.knobs);
  if (!plan.ok()) {
    r.plan.clear();
    return plan.status();
  }
  r.plan = std::string(*plan);
  return absl::OkStatus();
}

}  // namespace tunedb
