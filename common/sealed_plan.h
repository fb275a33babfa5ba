// A stored execution plan bound to what it was made for. The search seals
// each serialized plan it keeps (AlgoResult::plan) with a digest over the
// key's text, the engine config and the plan itself; a reader opens it for
// the key and config it wants. So a plan that was cut short, edited, or
// copied from another record or config is refused here, before cuDNN sees
// it. The sealed form is text (a header line, then cuDNN's serialized plan):
//
//   tunedb-plan/1 <plan bytes> <digest: 16 hex digits>\n<plan>
//
// digest = FNV-1a 64 of "<key text>\n<engine>\n<knobs text>\n<plan>": it
// finds damage and mix-ups, not forgeries.
//
// Thread safety: stateless functions.
#ifndef TUNEDB_COMMON_SEALED_PLAN_H_
#define TUNEDB_COMMON_SEALED_PLAN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

inline constexpr absl::string_view kSealedPlanMagic = "tunedb-plan/1 ";

// `plan` (cuDNN's serialized execution plan of engine `engine` with
// `knobs`, for `key`) sealed.
std::string SealPlan(const ProblemKey& key, int engine,
                     const std::vector<Knob>& knobs, absl::string_view plan);

// The plan inside `sealed`, if it was sealed for `key`, `engine` and
// `knobs` and is whole. DATA_LOSS for a plan cut short or edited (its size
// or digest differs), FAILED_PRECONDITION for one sealed for another key or
// config (the digest differs while the size holds, so the two cannot always
// be told apart: the message names both), INVALID_ARGUMENT for text that is
// not a sealed plan (a plan stored before plans were sealed is one).
absl::StatusOr<absl::string_view> OpenSealedPlan(
    absl::string_view sealed, const ProblemKey& key, int engine,
    const std::vector<Knob>& knobs);

// The digest in `sealed`'s header (16 hex digits), without checking it
// against anything: an id for the sealed plan; "" for text that is not one.
std::string SealedPlanDigest(absl::string_view sealed);

// Seals every result's plan that is not sealed yet (a search's, as the
// daemon stores it).
void SealPlans(const ProblemKey& key, std::vector<AlgoResult>& results);

// Replaces r.plan by the plan inside it (OpenSealedPlan for r's config), or,
// where it cannot be opened, clears it and returns why. OK for no plan.
absl::Status UnsealPlan(const ProblemKey& key, AlgoResult& r);

}  // namespace tunedb

#endif  // TUNEDB_COMMON_SEALED_PLAN_H_
