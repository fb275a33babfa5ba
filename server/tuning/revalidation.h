// Revalidation (docs/revalidation.md): a record for a new cuDNN version made
// by re-timing what the same problem's record under an older version chose,
// instead of a full search; after a driver upgrade, the same rules re-time
// a key's own record measured under an older driver (its source is that
// record). The rules, as pure functions: which record is the source, which
// configs are re-timed (RevalidationCandidates), and whether the re-timed
// result stands or the key needs a full search (JudgeRevalidation).
// TuningCore runs them around Finder::Search.
//
// Thread safety: pure functions.
#ifndef TUNEDB_SERVER_TUNING_REVALIDATION_H_
#define TUNEDB_SERVER_TUNING_REVALIDATION_H_

#include <string>
#include <vector>

#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

// How many of the old record's fastest configs are re-timed, besides its
// choices under the common constraints (RevalidationCandidates).
inline constexpr int kRevalidateTopK = 3;

// The record of `key`'s problem on `key`'s GPU model under cuDNN
// `from_cudnn` among `others` (records read with OtherVersionsFilter), the
// most recently measured where several CUDA runtimes have one; null when
// there is none.
const Record* RevalidationSource(const ProblemKey& key, int from_cudnn,
                                 const std::vector<Record>& others);

// The configs to re-time (SearchOptions::retime_only): the source's
// kRevalidateTopK fastest OK results, and its choices without constraints,
// deterministic-only and with numerical notes excluded by a framework's
// usual filters where those differ; configs only (no timings, no plans: a
// plan is made for one cuDNN version and is built again). Empty when the
// source has no OK result.
std::vector<AlgoResult> RevalidationCandidates(const Record& source);

struct RevalidationVerdict {
  enum class Outcome {
    kKept,        // the old choice is still the fastest re-timed
    kChanged,     // another of the re-timed configs is now the fastest
    kFullSearch,  // the re-timed configs cannot decide: search in full
  };
  Outcome outcome = Outcome::kFullSearch;
  std::string why;  // for kFullSearch: the reason, for logs
};

// Judges a revalidation's results (`retimed`: the candidates and cuDNN's
// new first choices, as the finder timed them) against its `source`:
//   - none of the source's candidates runs: full search;
//   - one of cuDNN's new choices that is not among them beats the fastest
//     of them by more than kMinGainOverHeuristic: the old ranking no longer
//     decides for this key (a config neither version ranks first may be
//     faster still): full search;
//   - else kept, when the new choice (Choose's rule over `retimed`) is the
//     source's, or changed (a new choice within 2 % of the old candidates
//     is served by Choose's rule where it is cuDNN's first).
RevalidationVerdict JudgeRevalidation(const Record& source,
                                      const std::vector<AlgoResult>& retimed);

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_REVALIDATION_H_
