#include "common/sealed_plan.h"

#include <cstdint>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "common/valid_key.h"

namespace tunedb {
namespace {

uint64_t Digest(const ProblemKey& key, int engine,
                const std::vector<Knob>& knobs, absl::string_view plan) {
  const std::string head =
      absl::StrCat(key.ToText(), "\n", engine, "\n", KnobsText(knobs), "\n");
  return Fnv1aExtend(KeyTextHash(head), plan);
}

// The header line of `sealed`, taken apart.
struct Header {
  uint64_t bytes = 0;         // the plan's size as sealed
  absl::string_view digest;   // 16 hex digits
  absl::string_view plan;     // what follows the header line
};

absl::StatusOr<Header> ParseHeader(absl::string_view sealed) {
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
  Header h;
  if (space == absl::string_view::npos ||
      !absl::SimpleAtoi(header.substr(0, space), &h.bytes) ||
      header.size() - space - 1 != 16) {
    return absl::DataLossError("sealed plan: header damaged");
  }
  h.digest = header.substr(space + 1);
  h.plan = sealed.substr(eol + 1);
  return h;
}

}  // namespace

std::string SealPlan(const ProblemKey& key, int engine,
                     const std::vector<Knob>& knobs, absl::string_view plan) {
  return absl::StrCat(kSealedPlanMagic, plan.size(), " ",
                      KeyHashText(Digest(key, engine, knobs, plan)), "\n",
                      plan);
}

std::string SealedPlanDigest(absl::string_view sealed) {
  absl::StatusOr<Header> h = ParseHeader(sealed);
  return h.ok() ? std::string(h->digest) : std::string();
}

absl::StatusOr<absl::string_view> OpenSealedPlan(
    absl::string_view sealed, const ProblemKey& key, int engine,
    const std::vector<Knob>& knobs) {
  ASSIGN_OR_RETURN(const Header h, ParseHeader(sealed));
  const absl::string_view plan = h.plan;
  if (plan.size() != h.bytes) {
    return absl::DataLossError(absl::StrFormat(
        "sealed plan: %d bytes where %d were sealed", plan.size(), h.bytes));
  }
  const std::string want = KeyHashText(Digest(key, engine, knobs, plan));
  if (h.digest != want) {
    return absl::FailedPreconditionError(
        absl::StrCat("sealed plan: digest ", h.digest,
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
