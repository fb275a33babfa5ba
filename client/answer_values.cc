#include "client/answer_values.h"

#include "absl/strings/str_cat.h"
#include "common/constraints_text.h"

namespace tunedb {

int64_t DeadlineAfter(int64_t now_ms, absl::Duration d) {
  if (d == absl::InfiniteDuration()) return kNever;
  return now_ms + absl::ToInt64Milliseconds(d);
}

Answer AnswerFrom(Source source, const AlgoResult& choice) {
  return Answer{source, choice.algo, choice.math_type,
                choice.workspace_bytes};
}

CacheValue CacheValueFrom(CacheValue::Kind kind, const AlgoResult& choice,
                          int64_t deadline_ms) {
  CacheValue v;
  v.kind = kind;
  v.algo = choice.algo;
  v.math_type = choice.math_type;
  v.workspace_bytes = choice.workspace_bytes;
  v.deadline_ms = deadline_ms;
  return v;
}

Answer AnswerFromCached(const CacheValue& v) {
  Answer a;
  switch (v.kind) {
    case CacheValue::kTuned:
      a.source = Source::kCache;
      break;
    case CacheValue::kHeuristic:
      a.source = Source::kHeuristic;
      break;
    case CacheValue::kPredicted:
      a.source = Source::kPredicted;
      break;
    default:
      return Answer{};
  }
  a.algo = v.algo;
  a.math_type = v.math_type;
  a.workspace_bytes = v.workspace_bytes;
  return a;
}

AlgoResult ResultOf(const Answer& a) {
  AlgoResult r;
  r.algo = a.algo;
  r.math_type = a.math_type;
  r.workspace_bytes = a.workspace_bytes;
  return r;
}

std::string SlotText(const ProblemKey& key, const Constraints& c) {
  return absl::StrCat(key.ToText(), " ", ConstraintsText(c));
}

}  // namespace tunedb
