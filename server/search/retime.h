// Phase 3 of a cuDNN search: re-timing the leaders by launch time. The pool
// starts with the screened candidates within options.retime_margin of the
// best launch time, at least min_candidates and at most max_candidates,
// less those the budget's plan holds out (SearchBudget::PlanRetime: a clear
// leader's rivals, the slower of twins). Rounds take, of every pool member
// in an order that rotates from round to round (never starting with the
// member whose calls ran last, so that every sample starts at a switch:
// CudnnFinderOptions::retime_start), one sample of direct launches (launch
// and host time) and, every other round, one of CUDA-graph replays (GPU
// time), until min_rounds have run and the leader is settled
// (every other member a near-tie within options.tie_margin or clearly
// slower), or max_rounds, or the budget cannot pay for another round
// (SearchBudget::MayRunRound; two rounds always, of the near-ties within
// options.floor_margin of the leader where the budget cannot pay for the
// whole pool). cuDNN's first choice (FirstChoiceOf) always joins the first
// pool, which Choose's rule needs. A clear leader's pool is
// the leader alone (and that first choice), for one round. A screened candidate outside the pool
// within the margin of the re-timed leader then joins it (a held-out one
// only where its screened time is below the re-timed leader's) and the
// rounds go on (at most four passes), so the result ranked first has the
// full samples.
//
// What the record holds: re-timed results get launch, host and GPU time
// (median, spread = max - min, sample count) and retimed = true; a clear
// leader has one sample of each. Screened results left out of the pool keep
// their one screened direct sample as launch and host time (samples = 1)
// and have no GPU time (samples = 0: not measured); the others keep Find's
// launch sample alone. A member that fails is marked kFailed. The results
// end sorted (by launch time).
//
// Thread safety: none; one search at a time.
#ifndef TUNEDB_SERVER_SEARCH_RETIME_H_
#define TUNEDB_SERVER_SEARCH_RETIME_H_

#include <vector>

#include "absl/status/statusor.h"
#include "server/search/candidate_timer.h"
#include "server/search/cudnn_finder_options.h"
#include "server/search/search_budget.h"
#include "tunedb/record.h"

namespace tunedb {

// Re-times the leaders of `results` (screened, sorted). Returns the most
// rounds any pass ran (SearchResult::repeats). Errors: the fatal one of a
// broken CUDA context, or a failed stream synchronisation.
absl::StatusOr<int> Retime(CandidateTimer& timer,
                           const CudnnFinderOptions& options,
                           const SearchBudget& budget,
                           std::vector<AlgoResult>& results);

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SEARCH_RETIME_H_
