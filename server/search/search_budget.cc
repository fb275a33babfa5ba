#include "server/search/search_budget.h"

#include <algorithm>
#include <utility>

#include "common/config_identity.h"
#include "server/search/run_timer.h"

namespace tunedb {
namespace {

// A re-timing sample costs more than its batch: the untimed run before it,
// the wait for the GPU to idle, the synchronisation, and every other round
// a CUDA-graph replay. 1.3x its length on the H200 (median over the
// recorded searches of bench/results/2026-12-01-h200-budget: 1.75 ms a
// member and round for 1.2 ms batches and 0.3 ms replays every other round).
constexpr double kSampleOverhead = 1.3;

// Whether two times are within `margin` of each other (either way).
bool Within(double a, double b, double margin) {
  if (a <= 0 || b <= 0) return false;
  return std::max(a, b) <= std::min(a, b) * (1 + margin);
}

}  // namespace

SearchBudget::SearchBudget(const CudnnFinderOptions& options, double find_ms,
                           absl::Duration timeout,
                           const std::vector<AlgoResult>& results, Clock clock)
    : options_(options), clock_(std::move(clock)), start_(clock_()) {
  total_ = std::min({absl::Milliseconds(std::max(find_ms, 0.0) *
                                        options.search_budget_factor),
                     options.max_search_budget, timeout / 4});
  total_ = std::max(total_, absl::ZeroDuration());
  // The choice is most likely Find's fastest; its first reference the
  // fastest OK result of another algorithm (verify.h).
  double verify_ms = options.verify_overhead_ms;
  const AlgoResult* choice = nullptr;
  const AlgoResult* reference = nullptr;
  for (const AlgoResult& r : results) {
    if (r.status != AlgoStatus::kOk) continue;
    find_ms_[CandidateKeyOf(r)] = r.launch.median_ms;
    if (choice == nullptr) {
      choice = &r;
    } else if (reference == nullptr && r.algo != choice->algo) {
      reference = &r;
    }
  }
  if (choice != nullptr) verify_ms += choice->launch.median_ms;
  if (reference != nullptr) verify_ms += reference->launch.median_ms;
  verify_reserve_ = absl::Milliseconds(verify_ms);
  const absl::Duration timing =
      std::max(total_ - verify_reserve_, absl::ZeroDuration());
  screen_end_ = start_ + timing * options.screen_share;
  timing_end_ = start_ + timing;
}

bool SearchBudget::MayScreen(int screened, absl::Duration expected) const {
  return screened < 2 || Now() + expected <= screen_end_;
}

RetimePlan SearchBudget::PlanRetime(
    const std::vector<AlgoResult>& results) const {
  RetimePlan plan;
  std::vector<const AlgoResult*> ok;
  for (const AlgoResult& r : results) {
    if (r.status == AlgoStatus::kOk) ok.push_back(&r);
  }
  if (ok.empty() || !ok.front()->retimed) return plan;
  // Twins: the later (slower by screen) of two screened results of one
  // algorithm that Find and the screen both time within tie_margin.
  for (size_t i = 0; i < ok.size(); ++i) {
    if (!ok[i]->retimed || plan.held_out.count(CandidateKeyOf(*ok[i]))) {
      continue;
    }
    for (size_t j = i + 1; j < ok.size(); ++j) {
      const AlgoResult& a = *ok[i];
      const AlgoResult& b = *ok[j];
      if (b.retimed && SameAlgoAndKnobs(a, b) &&
          Within(FindMs(a), FindMs(b), options_.tie_margin) &&
          Within(a.launch.median_ms, b.launch.median_ms, options_.tie_margin)) {
        plan.held_out.insert(CandidateKeyOf(b));
      }
    }
  }
  // A clear leader: every other candidate (twins of it aside) far behind
  // by Find and, where screened, by the screen.
  const AlgoResult& leader = *ok.front();
  const double lead = 1 + options_.clear_lead;
  bool clear = true;
  for (size_t i = 1; i < ok.size() && clear; ++i) {
    const AlgoResult& r = *ok[i];
    if (plan.held_out.count(CandidateKeyOf(r)) && SameAlgoAndKnobs(r, leader)) {
      continue;
    }
    const bool behind_find = FindMs(r) >= FindMs(leader) * lead;
    const bool behind_screen =
        !r.retimed || r.launch.median_ms >= leader.launch.median_ms * lead;
    clear = behind_find && behind_screen;
  }
  if (clear) {
    plan.clear_leader = true;
    for (size_t i = 1; i < ok.size(); ++i) {
      plan.held_out.insert(CandidateKeyOf(*ok[i]));
    }
  }
  return plan;
}

std::vector<CandidateKey> SearchBudget::NearTies(
    const std::vector<std::pair<CandidateKey, double>>& estimates) const {
  double best = -1;
  for (const auto& [key, ms] : estimates) {
    if (best < 0 || ms < best) best = ms;
  }
  std::vector<CandidateKey> out;
  for (const auto& [key, ms] : estimates) {
    if (ms <= best * (1 + options_.floor_margin)) out.push_back(key);
  }
  return out;
}

double SearchBudget::RetimeSampleMs(int members, int rounds) const {
  if (members <= 0 || rounds <= 0) return options_.sample_ms;
  const double left_ms = absl::ToDoubleMilliseconds(timing_end_ - Now());
  // Per member and round: the direct sample and, every other round, a
  // replay, each with its overhead.
  const double per = left_ms / (members * rounds) / kSampleOverhead -
                     options_.graph_sample_ms / 2;
  return std::clamp(per, 0.0, options_.sample_ms);
}

int SearchBudget::RetimeBatch(const AlgoResult& r, double sample_ms) const {
  const double run_ms = r.cost(LaunchMode::kDirect).median_ms;
  // Shortened to min_batch_runs at most: never longer than a full sample.
  const int full = SampleBatch(run_ms, options_.sample_ms, options_.max_batch);
  return std::max(SampleBatch(run_ms, sample_ms, options_.max_batch),
                  std::min(options_.min_batch_runs, full));
}

double SearchBudget::FindMs(const AlgoResult& r) const {
  auto it = find_ms_.find(CandidateKeyOf(r));
  return it == find_ms_.end() ? 0 : it->second;
}

}  // namespace tunedb
