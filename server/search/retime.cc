#include "server/search/retime.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "absl/time/time.h"
#include "common/record_results.h"
#include "common/status_macros.h"
#include "cudnn/cudnn_status.h"
#include "server/search/algo_failure.h"
#include "server/search/run_timer.h"
#include "server/search/sample_stats.h"

namespace tunedb {
namespace {

using Key = CandidateKey;

constexpr int kMaxPasses = 4;

// One member's samples, per run.
struct Samples {
  std::vector<double> launch, host, gpu;
};

// The state of one re-timing: the pool and each member's samples.
class Retimer {
 public:
  Retimer(CandidateTimer& timer, const CudnnFinderOptions& options,
          const SearchBudget& budget, std::vector<AlgoResult>& results)
      : timer_(timer),
        options_(options),
        budget_(budget),
        results_(results),
        plan_(budget.PlanRetime(results)) {}

  absl::StatusOr<int> Run() {
    int rounds = 0;
    for (int pass = 0; pass < kMaxPasses; ++pass) {
      const int added = ExtendPool();
      if (pool_.empty() || (pass > 0 && added == 0)) break;
      // A clear leader's first pool is the leader alone, for one round; a
      // pass after it means a held-out rival would rank first: the pool is
      // then timed like any other. Later passes run while the budget lasts,
      // one round always where a joiner would otherwise rank first on its
      // one screened sample.
      const bool clear = plan_.clear_leader && pass == 0;
      const int max_rounds = clear ? 1 : options_.max_rounds;
      const int floor = pass > 0 ? (joiner_leads_ ? 1 : 0)
                        : clear  ? 1
                                 : kFloorRounds;
      sample_ms_ = budget_.RetimeSampleMs(static_cast<int>(OkPool().size()),
                                          std::max(floor, 1));
      ASSIGN_OR_RETURN(const int ran, Rounds(max_rounds, floor));
      rounds = std::max(rounds, ran);
      StoreSamples();
      SortResults(results_);
      if (!budget_.MayExtendPool()) break;
    }
    return rounds;
  }

 private:
  AlgoResult& Find(const Key& key) {
    for (AlgoResult& r : results_) {
      if (CandidateKeyOf(r) == key) return r;
    }
    return results_.front();  // unreachable: keys come from results_
  }

  // Median launch time of a member's samples; 0 (and an empty entry) for one
  // without, such as a member that failed.
  double MedianOf(const Key& k) { return Median(samples_[k].launch); }

  bool InPool(const Key& k) const {
    return std::find(pool_.begin(), pool_.end(), k) != pool_.end();
  }

  // Adds the screened OK results within the margin of the pool's leader (of
  // the best result while the pool is empty), the plan's held-out ones only
  // where they are faster than the pool's leader; returns how many joined.
  int ExtendPool() {
    joiner_leads_ = false;
    const bool first_pool = pool_.empty();
    double leader_ms = -1;
    for (const Key& k : pool_) {
      const double m = MedianOf(k);
      if (leader_ms < 0 || m < leader_ms) leader_ms = m;
    }
    int added = 0;
    for (const AlgoResult& r : results_) {
      if (r.status != AlgoStatus::kOk) break;
      const Key key = CandidateKeyOf(r);
      if (!r.retimed || InPool(key)) continue;
      const double cost = r.cost(LaunchMode::kDirect).median_ms;
      if (plan_.held_out.count(key)) {
        if (leader_ms >= 0 && cost < leader_ms) {
          pool_.push_back(key);
          ++added;
          joiner_leads_ = true;
        }
        continue;
      }
      const double ref = leader_ms < 0
                             ? results_[0].cost(LaunchMode::kDirect).median_ms
                             : leader_ms;
      const bool within = cost <= ref * (1 + options_.retime_margin);
      const bool needed =
          static_cast<int>(pool_.size()) < options_.min_candidates;
      const bool room =
          static_cast<int>(pool_.size()) < options_.max_candidates ||
          (leader_ms >= 0 && cost < leader_ms);
      if ((within || needed) && room) {
        pool_.push_back(key);
        ++added;
        joiner_leads_ = joiner_leads_ || (leader_ms >= 0 && cost < leader_ms);
      }
    }
    return added + (first_pool ? AddFirstChoice() : 0);
  }

  // cuDNN's first choice joins the first pool, outside the margin, held out
  // or not: Choose weighs the leader against it, and only samples taken
  // alike can tell a 2 % gain. Returns 1 where it joined, else 0.
  int AddFirstChoice() {
    const AlgoResult* first = FirstChoiceOf(results_);
    if (first == nullptr || !first->retimed) return 0;
    const Key key = CandidateKeyOf(*first);
    if (InPool(key)) return 0;
    pool_.push_back(key);
    return 1;
  }

  // One direct sample (launch and host time) of r and, in even rounds, one
  // graph sample (GPU time).
  absl::Status SampleOne(const AlgoResult& r, int round, Samples& out) {
    ASSIGN_OR_RETURN(const DirectSample direct,
                     timer_.TimeDirect(r, budget_.RetimeBatch(r, sample_ms_),
                                       options_.retime_start));
    out.launch.push_back(direct.launch_ms);
    out.host.push_back(direct.host_ms);
    if (round % 2 == 0) {
      ASSIGN_OR_RETURN(
          const double gpu_ms,
          timer_.Sample(
              r, SampleBatch(r.cost(LaunchMode::kDirect).median_ms,
                             options_.graph_sample_ms, options_.max_batch)));
      out.gpu.push_back(gpu_ms);
    }
    return absl::OkStatus();
  }

  // The OK members.
  std::vector<Key> OkPool() {
    std::vector<Key> ok;
    for (const Key& k : pool_) {
      if (Find(k).status == AlgoStatus::kOk) ok.push_back(k);
    }
    return ok;
  }

  // A member's launch time so far: the median of its samples, else its
  // screened time.
  double EstimateOf(const Key& k) {
    auto it = samples_.find(k);
    if (it != samples_.end() && !it->second.launch.empty()) {
      return Median(it->second.launch);
    }
    return Find(k).cost(LaunchMode::kDirect).median_ms;
  }

  // The near-ties among `members` the floor of rounds is for
  // (SearchBudget::NearTies).
  std::vector<Key> NearTies(const std::vector<Key>& members) {
    std::vector<std::pair<Key, double>> estimates;
    for (const Key& k : members) estimates.push_back({k, EstimateOf(k)});
    return budget_.NearTies(estimates);
  }

  // One sample of each of `order`'s members, starting at member `round`
  // (rotating), or at the one after it where that member's calls were the
  // last run (the end of the round or pass before, or screening), so that
  // every sample starts at a switch; returns the members that ran.
  absl::StatusOr<std::vector<Key>> Round(int round, std::vector<Key> order) {
    if (order.empty()) return order;
    std::rotate(order.begin(), order.begin() + (round % order.size()),
                order.end());
    if (order.size() > 1 && order.front() == timer_.LastRun()) {
      std::rotate(order.begin(), order.begin() + 1, order.end());
    }
    for (const Key& k : order) {
      AlgoResult& r = Find(k);
      const absl::Status s = SampleOne(r, round, samples_[k]);
      if (!s.ok()) {
        RETURN_IF_ERROR(MarkFailed(r, s));
        samples_.erase(k);
      }
    }
    return order;
  }

  // Whether the leader among `members` (by median launch time) is settled
  // against every other member (SettledAgainst).
  bool Settled(const std::vector<Key>& members) {
    const Key* leader = nullptr;
    for (const Key& k : members) {
      if (!samples_.count(k)) continue;
      if (leader == nullptr || MedianOf(k) < MedianOf(*leader)) leader = &k;
    }
    if (leader == nullptr) return true;
    return std::all_of(members.begin(), members.end(), [&](const Key& k) {
      return k == *leader || !samples_.count(k) ||
             SettledAgainst(samples_[*leader].launch, samples_[k].launch,
                            options_.tie_margin);
    });
  }

  // Rounds until min_rounds have run and the leader is settled, or
  // `max_rounds`, or the budget cannot pay for another round: one whose
  // members each take as long as the longest member's share of a round so
  // far (rounds with replays cost more). The first `floor` rounds run
  // whatever the budget, but then only for the near-ties (NearTies) where
  // the budget cannot pay for the whole pool. Returns how many ran.
  absl::StatusOr<int> Rounds(int max_rounds, int floor) {
    int ran = 0;
    for (int round = 0; round < max_rounds; ++round) {
      std::vector<Key> members = OkPool();
      if (!budget_.MayRunRound(longest_share_ *
                               static_cast<int64_t>(members.size()))) {
        if (ran >= floor) break;
        members = NearTies(members);
      }
      const absl::Time start = budget_.Now();
      ASSIGN_OR_RETURN(const std::vector<Key> order,
                       Round(round, std::move(members)));
      if (order.empty()) break;
      ran = round + 1;
      longest_share_ =
          std::max(longest_share_, (budget_.Now() - start) /
                                       static_cast<int64_t>(order.size()));
      if (ran >= options_.min_rounds && Settled(order)) break;
    }
    return ran;
  }

  void StoreSamples() {
    for (const auto& [k, v] : samples_) {
      if (v.launch.empty()) continue;
      AlgoResult& r = Find(k);
      r.launch = Summarize(v.launch);
      r.host = Summarize(v.host);
      if (!v.gpu.empty()) r.gpu = Summarize(v.gpu);
      r.retimed = true;
    }
  }

  static Timing Summarize(const std::vector<double>& v) {
    return {Median(v), Spread(v), static_cast<int>(v.size())};
  }

  CandidateTimer& timer_;
  const CudnnFinderOptions& options_;
  const SearchBudget& budget_;
  std::vector<AlgoResult>& results_;
  const RetimePlan plan_;
  double sample_ms_ = 0;       // this pass's direct samples
  bool joiner_leads_ = false;  // the last ExtendPool added a faster one
  // The longest time a round so far took, per member.
  absl::Duration longest_share_ = absl::ZeroDuration();
  std::vector<Key> pool_;
  std::map<Key, Samples> samples_;
};

}  // namespace

absl::StatusOr<int> Retime(CandidateTimer& timer,
                           const CudnnFinderOptions& options,
                           const SearchBudget& budget,
                           std::vector<AlgoResult>& results) {
  return Retimer(timer, options, budget, results).Run();
}

}  // namespace tunedb
