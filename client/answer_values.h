// The client's value conversions, one copy each: an Answer from a chosen
// AlgoResult, a CacheValue from one, an Answer from a cache hit, an
// AlgoResult from an Answer, the text naming a key's answer slot, and
// deadlines on CoarseNowMs()'s clock.
//
// Thread safety: pure functions.
#ifndef TUNEDB_CLIENT_ANSWER_VALUES_H_
#define TUNEDB_CLIENT_ANSWER_VALUES_H_

#include <cstdint>
#include <limits>
#include <string>

#include "absl/time/time.h"
#include "client/answer_cache.h"
#include "tunedb/client.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

// A deadline that never comes.
inline constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

// `d` after `now_ms`; kNever for an infinite `d`.
int64_t DeadlineAfter(int64_t now_ms, absl::Duration d);

// The answer `choice` gives, from `source`.
Answer AnswerFrom(Source source, const AlgoResult& choice);

// The cache entry of `kind` for `choice`, live until `deadline_ms`.
CacheValue CacheValueFrom(CacheValue::Kind kind, const AlgoResult& choice,
                          int64_t deadline_ms);

// The answer a cache hit on `v` gives (kTuned is kCache); none for kNone
// and kEmpty.
Answer AnswerFromCached(const CacheValue& v);

// The algorithm, math type and workspace of `a`.
AlgoResult ResultOf(const Answer& a);

// The text of `key` under `c` (its key text and ConstraintsText): an
// in-memory name, never persisted.
std::string SlotText(const ProblemKey& key, const Constraints& c);

}  // namespace tunedb

#endif  // TUNEDB_CLIENT_ANSWER_VALUES_H_
