// SearchBudget: the budget policy of a cuDNN search, the one place that
// decides how much of it screening, re-timing and verification spend.
//
// Everything after the search's own cudnnFind calls (screen.h, retime.h,
// verify.h) shares one budget: options.search_budget_factor times the wall
// time of those Find calls, at most min(options.max_search_budget, search
// timeout / 4). It is spent in this order:
//   - verification's predicted cost is set aside first (the Find times of
//     the choice and of its first reference, another algorithm, plus
//     options.verify_overhead_ms); verification always runs, whatever is
//     left;
//   - screening may spend options.screen_share of the rest: a candidate is
//     screened while it is expected to end in that share (as long as the
//     longest screening so far, or its batch and untimed run at its Find
//     time where longer; the first two always);
//   - re-timing gets the rest (the timing end): a round runs while it is
//     expected to end before it (from the longest member's share of a
//     round so far). The first pool's first two rounds always run (of its
//     near-ties only, within options.floor_margin of the leader, where the
//     whole pool does not fit), a clear leader's one; later passes run
//     while the budget lasts (one round always where a joiner would
//     otherwise rank first on its screened sample). Direct samples last
//     options.sample_ms, or less where two rounds of the pool would not
//     fit in what is left (options.min_batch_runs runs at least, or a full
//     sample's runs where fewer).
// The re-timing pool (RetimePlan): a clear leader (every other candidate's
// Find and screened times at least 1 + options.clear_lead times its own) is
// re-timed alone for one round; of twins (one algorithm and knobs under
// two math types, Find and screened times both within options.tie_margin
// of each other) the slower by screen is held out. Held-out candidates
// join the pool only where their screened time would rank them first.
//
// Thread safety: none; one search at a time. The clock is called from the
// caller's thread.
#ifndef TUNEDB_SERVER_SEARCH_SEARCH_BUDGET_H_
#define TUNEDB_SERVER_SEARCH_SEARCH_BUDGET_H_

#include <functional>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "server/search/conv_launcher.h"
#include "server/search/cudnn_finder_options.h"
#include "tunedb/record.h"

namespace tunedb {

// Rounds every re-timing pool but a clear leader's runs, budget or not: each
// member then has two launch-time samples and a GPU-time sample.
inline constexpr int kFloorRounds = 2;

// Who re-timing times (SearchBudget::PlanRetime).
struct RetimePlan {
  // The leader is clear: the first pool is the leader alone, one round.
  bool clear_leader = false;
  // Candidates that join the pool only where their screened launch time is
  // below the re-timed leader's (they would rank first otherwise): a clear
  // leader's rivals, and the slower of twins.
  std::set<CandidateKey> held_out;
};

class SearchBudget {
 public:
  using Clock = std::function<absl::Time()>;

  // Starts the budget now (by `clock`). `find_ms`: the wall time of the
  // search's own Find calls; `timeout`: the search's; `results`: Find's
  // candidates, sorted, with Find's launch times (noted here: screening
  // overwrites them).
  SearchBudget(
      const CudnnFinderOptions& options, double find_ms, absl::Duration timeout,
      const std::vector<AlgoResult>& results,
      Clock clock = [] { return absl::Now(); });

  // The whole budget: screening, re-timing and verification.
  absl::Duration total() const { return total_; }
  // What is set aside for verification.
  absl::Duration verify_reserve() const { return verify_reserve_; }
  absl::Time Now() const { return clock_(); }

  // Whether screening may go on to its next candidate, expected to take
  // `expected`, `screened` being screened already (the first two always).
  bool MayScreen(int screened, absl::Duration expected) const;

  // The pool rules for `results`: screened (those with retimed = true carry
  // their screened launch time) and sorted.
  RetimePlan PlanRetime(const std::vector<AlgoResult>& results) const;

  // Whether a re-timing round expected to take `expected` may run (the
  // caller runs its floor of rounds without asking).
  bool MayRunRound(absl::Duration expected) const {
    return Now() + expected <= timing_end_;
  }
  // Whether re-timing may start another pass.
  bool MayExtendPool() const { return Now() < timing_end_; }
  // Of re-timing members with their launch times so far, the near-ties a
  // floor round times where the whole pool does not fit: the fastest and
  // those within options.floor_margin of it.
  std::vector<CandidateKey> NearTies(
      const std::vector<std::pair<CandidateKey, double>>& estimates) const;

  // How long each direct sample of re-timing `members` candidates lasts
  // when `rounds` rounds of them are to fit in what is left of the timing:
  // options.sample_ms, or less (the batch floor is RetimeBatch's).
  double RetimeSampleMs(int members, int rounds) const;
  // The batch length of r's direct samples lasting about `sample_ms`, from
  // its screened launch time: at least options.min_batch_runs, or the
  // batch of a full options.sample_ms where that is fewer runs.
  int RetimeBatch(const AlgoResult& r, double sample_ms) const;

 private:
  // r's launch time as Find reported it; 0 for a candidate Find did not
  // time.
  double FindMs(const AlgoResult& r) const;

  const CudnnFinderOptions& options_;
  Clock clock_;
  absl::Time start_;
  absl::Duration total_;
  absl::Duration verify_reserve_;
  absl::Time screen_end_;
  absl::Time timing_end_;
  std::map<CandidateKey, double> find_ms_;
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SEARCH_SEARCH_BUDGET_H_
