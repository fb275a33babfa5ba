// The cuDNN search's budget policy (search_budget.h) with screening and
// re-timing (screen.h, retime.h) run on a timer whose costs the test knows:
// a fake clock that each sample advances by its batch times the candidate's
// time per run, plus a fixed cost. No GPU, no wall clock.
#include "server/search/search_budget.h"

#include <map>
#include <optional>
#include <vector>

#include "absl/time/time.h"
#include "common/record_results.h"
#include "gtest/gtest.h"
#include "server/search/candidate_timer.h"
#include "server/search/cudnn_finder_options.h"
#include "server/search/retime.h"
#include "server/search/screen.h"
#include "tunedb/record.h"

namespace tunedb {
namespace {

// What one sample costs beyond its runs (synchronisation, the untimed run).
constexpr double kSampleFixedMs = 0.05;

// A candidate's true times per run. Direct samples return `launch_ms`
// times the next factor of `noise` (cycling), the first (the screen's)
// `screen_ms` where set; a sample that starts at the switch, after another
// candidate's calls, adds `switch_ms` (what its first call costs more)
// spread over its batch.
struct Cost {
  double launch_ms = 0.1;
  double gpu_ms = 0.09;
  double host_ms = 0.02;
  double screen_ms = 0;
  double switch_ms = 0;
  std::vector<double> noise = {1.0};
};

class FakeTimer final : public CandidateTimer {
 public:
  absl::StatusOr<DirectSample> TimeDirect(const AlgoResult& r, int batch,
                                          DirectStart from) override {
    const Cost& c = costs.at(CandidateKeyOf(r));
    std::vector<int>& batches = direct_batches[CandidateKeyOf(r)];
    double ms = c.launch_ms * c.noise[batches.size() % c.noise.size()];
    if (batches.empty() && c.screen_ms > 0) ms = c.screen_ms;
    // The first call costs switch_ms more only after another candidate's.
    const bool switched = !last.has_value() || *last != CandidateKeyOf(r);
    if (from == DirectStart::kAtSwitch) {
      if (switched) ms += c.switch_ms / batch;
      switches[CandidateKeyOf(r)].push_back(switched);
      retime_order.push_back(r.algo);
    }
    last = CandidateKeyOf(r);
    batches.push_back(batch);
    starts[CandidateKeyOf(r)].push_back(from);
    now += absl::Milliseconds(batch * ms + kSampleFixedMs);
    return DirectSample{ms, c.host_ms};
  }
  absl::StatusOr<double> Sample(const AlgoResult& r, int batch) override {
    const Cost& c = costs.at(CandidateKeyOf(r));
    last = CandidateKeyOf(r);
    ++replays[CandidateKeyOf(r)];
    now += absl::Milliseconds(batch * c.gpu_ms + kSampleFixedMs);
    return c.gpu_ms;
  }
  std::optional<CandidateKey> LastRun() const override { return last; }
  SearchBudget::Clock clock() {
    return [this] { return now; };
  }
  int DirectSamples(const AlgoResult& r) {
    return static_cast<int>(direct_batches[CandidateKeyOf(r)].size());
  }

  absl::Time now = absl::UnixEpoch();
  std::map<CandidateKey, Cost> costs;
  std::map<CandidateKey, std::vector<int>> direct_batches;
  std::map<CandidateKey, std::vector<DirectStart>> starts;
  // Per kAtSwitch sample: whether another candidate's calls came before it.
  std::map<CandidateKey, std::vector<bool>> switches;
  std::optional<CandidateKey> last;  // the candidate whose calls ran last
  std::vector<int> retime_order;     // the algorithm of each kAtSwitch sample
  std::map<CandidateKey, int> replays;
};

AlgoResult Found(int algo, MathType math, double find_ms) {
  AlgoResult r;
  r.algo = algo;
  r.math_type = math;
  r.status = AlgoStatus::kOk;
  r.launch = {find_ms, 0, 1};
  return r;
}

// A search's phases after Find: the candidates (Find's times as `find_ms`,
// true costs given) screened and re-timed under a budget for Find calls of
// `find_wall_ms`.
class SearchBudgetTest : public ::testing::Test {
 protected:
  // The settings the budgets and batch lengths below are worked out for.
  SearchBudgetTest() {
    options_.search_budget_factor = 0.5;
    options_.screen_share = 0.4;
    options_.verify_overhead_ms = 0.3;
    options_.screen_sample_ms = 0.3;
    options_.sample_ms = 1.2;
    options_.graph_sample_ms = 0.3;
    options_.min_batch_runs = 8;
    options_.retime_margin = 0.15;
    options_.tie_margin = 0.02;
    options_.floor_margin = 0.05;
    options_.clear_lead = 0.25;
    options_.min_rounds = 2;
    options_.max_rounds = 12;
    options_.max_candidates = 4;
  }
  void Add(int algo, MathType math, double find_ms, Cost cost) {
    results_.push_back(Found(algo, math, find_ms));
    timer_.costs[CandidateKeyOf(results_.back())] = cost;
  }
  // A candidate that Find and every sample time at `ms` a run.
  void Add(int algo, MathType math, double ms) {
    Cost cost;
    cost.launch_ms = ms;
    Add(algo, math, ms, cost);
  }
  // Every result was re-timed (`min_samples` samples at least), and each of
  // its samples followed another candidate's calls.
  void ExpectEveryRetimingSampleAtASwitch(int min_samples = kFloorRounds) {
    for (const AlgoResult& r : results_) {
      const std::vector<bool>& switched = timer_.switches[CandidateKeyOf(r)];
      ASSERT_GE(switched.size(), static_cast<size_t>(min_samples)) << r.algo;
      for (size_t i = 0; i < switched.size(); ++i) {
        EXPECT_TRUE(switched[i]) << r.algo << " sample " << i;
      }
    }
  }
  // Algorithm 1 (tensor ops) steady at 0.100 ms a run whose first call
  // after a switch costs 0.6 ms more, and algorithm 0 (FMA) at 0.105 ms
  // with none: Find and the screen put 1 first.
  void AddHostHeavyAndSteady() {
    Cost host_heavy;
    host_heavy.launch_ms = 0.100;
    host_heavy.switch_ms = 0.6;
    Add(1, MathType::kTensorOp, 0.100, host_heavy);
    Add(0, MathType::kFma, 0.105);
  }
  // Screens and re-times; returns the time they took.
  absl::Duration Search(double find_wall_ms) {
    SortResults(results_);
    budget_.emplace(options_, find_wall_ms, absl::Seconds(60), results_,
                    timer_.clock());
    const absl::Time start = timer_.now;
    EXPECT_TRUE(Screen(timer_, options_, *budget_, results_).ok());
    screen_took_ = timer_.now - start;
    absl::StatusOr<int> rounds = Retime(timer_, options_, *budget_, results_);
    EXPECT_TRUE(rounds.ok()) << rounds.status();
    rounds_ = rounds.value_or(0);
    return timer_.now - start;
  }
  const AlgoResult& Result(int algo, MathType math) {
    for (const AlgoResult& r : results_) {
      if (r.algo == algo && r.math_type == math) return r;
    }
    ADD_FAILURE() << "no result for algo " << algo;
    return results_.front();
  }
  absl::Duration Timing() const {
    return budget_->total() - budget_->verify_reserve();
  }

  CudnnFinderOptions options_;
  FakeTimer timer_;
  std::vector<AlgoResult> results_;
  std::optional<SearchBudget> budget_;
  absl::Duration screen_took_;
  int rounds_ = 0;
};

TEST_F(SearchBudgetTest, BudgetIsAShareOfFindCappedByTheTimeout) {
  options_.max_search_budget = absl::Seconds(3);
  Add(0, MathType::kFma, 1.0, {});
  SearchBudget budget(options_, 100, absl::Seconds(60), results_,
                      timer_.clock());
  EXPECT_EQ(budget.total(), absl::Milliseconds(50));
  SearchBudget capped(options_, 100, absl::Milliseconds(80), results_,
                      timer_.clock());
  EXPECT_EQ(capped.total(), absl::Milliseconds(20));
  SearchBudget at_most(options_, 100000, absl::Seconds(60), results_,
                       timer_.clock());
  EXPECT_EQ(at_most.total(), absl::Seconds(3));
}

TEST_F(SearchBudgetTest, VerificationIsReservedAsTheChoiceAndAnotherAlgorithm) {
  Add(1, MathType::kTensorOp, 0.5, {});
  Add(1, MathType::kFma, 0.6, {});  // same algorithm: not a reference
  Add(0, MathType::kFma, 2.0, {});
  SortResults(results_);
  SearchBudget budget(options_, 100, absl::Seconds(60), results_,
                      timer_.clock());
  EXPECT_EQ(budget.verify_reserve(), absl::Milliseconds(0.5 + 2.0 + 0.3));
}

TEST_F(SearchBudgetTest, ScreeningAndRetimingStayWithinWhatVerificationLeaves) {
  // Eight distinct algorithms within 8 % whose re-timing samples overlap
  // (±6 %), so the leader never settles and the rounds go on until the
  // budget stops them.
  for (int a = 0; a < 8; ++a) {
    Cost c;
    c.launch_ms = 0.1 * (1 + 0.01 * a);
    c.noise = {1.0, 0.94, 1.06};
    Add(a, MathType::kFma, c.launch_ms, c);
  }
  const absl::Duration took = Search(60);  // a 30 ms budget
  EXPECT_LE(took, Timing());
  EXPECT_LE(screen_took_, Timing() * options_.screen_share);
  EXPECT_GT(rounds_, kFloorRounds);         // the budget paid for more
  EXPECT_LT(rounds_, options_.max_rounds);  // but not for all
  EXPECT_EQ(results_.front().algo, 0);
  EXPECT_EQ(results_.front().launch.samples, rounds_);
}

TEST_F(SearchBudgetTest,
       NearTiesAreRetimedWithShortSamplesWhenTheBudgetIsTight) {
  Add(0, MathType::kFma, 0.050);
  Add(1, MathType::kFma, 0.051);  // 2 % apart: a near-tie
  Search(4);  // a 2 ms budget: two 1.2 ms rounds of two would not fit
  for (const AlgoResult& r : results_) {
    EXPECT_EQ(r.launch.samples, kFloorRounds) << r.algo;
    EXPECT_EQ(r.gpu.samples, 1) << r.algo;
    EXPECT_TRUE(r.host.measured()) << r.algo;
    // The screen's batch, then the re-timing's at the floor of 8 runs
    // (1.2 ms would be 24).
    const std::vector<int>& batches = timer_.direct_batches[CandidateKeyOf(r)];
    ASSERT_EQ(batches.size(), 3u);
    EXPECT_EQ(batches[1], 8);
    EXPECT_EQ(batches[2], 8);
  }
}

TEST_F(SearchBudgetTest, NearTiesGetFullSamplesWhenTheBudgetAllows) {
  Add(0, MathType::kFma, 0.0625);
  Add(1, MathType::kFma, 0.0635);  // 1.6 % apart
  Search(200);
  // 1.2 ms batches: 20 runs of the leader's 0.0625 ms.
  EXPECT_GE(Result(0, MathType::kFma).launch.samples, kFloorRounds);
  EXPECT_GE(Result(1, MathType::kFma).launch.samples, kFloorRounds);
  EXPECT_EQ(timer_.direct_batches[CandidateKeyOf(Result(0, MathType::kFma))][1],
            20);
}

TEST_F(SearchBudgetTest, WhenThePoolDoesNotFitTheFloorRoundIsTheNearTies) {
  Add(0, MathType::kFma, 0.100);
  Add(1, MathType::kFma, 0.103);  // 3 %: within floor_margin
  Add(2, MathType::kFma, 0.112);  // 12 %: in the pool, not a near-tie
  // A 3.5 ms budget: the three are screened, the first round of all three
  // spends the rest, and the second (a floor round) is the near-ties'.
  Search(7);
  EXPECT_EQ(Result(0, MathType::kFma).launch.samples, kFloorRounds);
  EXPECT_EQ(Result(1, MathType::kFma).launch.samples, kFloorRounds);
  const AlgoResult& r = Result(2, MathType::kFma);
  EXPECT_EQ(r.launch.samples, 1);
  EXPECT_EQ(r.gpu.samples, 1);
  EXPECT_EQ(timer_.DirectSamples(r), 2);  // screened, one round
}

TEST_F(SearchBudgetTest, SlowRunsAreNotLengthenedToTheBatchFloor) {
  Add(0, MathType::kFma, 0.5);
  Add(1, MathType::kFma, 0.505);
  Search(2);  // a 1 ms budget: the floor's samples
  // A full 1.2 ms sample is 3 runs of 0.5 ms: fewer than the floor of 8.
  for (const AlgoResult& r : results_) {
    const std::vector<int>& batches = timer_.direct_batches[CandidateKeyOf(r)];
    ASSERT_EQ(batches.size(), 3u) << r.algo;
    EXPECT_LE(batches[1], 3) << r.algo;
    EXPECT_LE(batches[2], 3) << r.algo;
  }
}

TEST_F(SearchBudgetTest,
       ScreeningTimesSteadyCallsAndRetimingStartsAtTheSwitch) {
  Add(0, MathType::kFma, 0.100);
  Add(1, MathType::kFma, 0.101);
  Search(200);
  for (const AlgoResult& r : results_) {
    const std::vector<DirectStart>& starts = timer_.starts[CandidateKeyOf(r)];
    ASSERT_GE(starts.size(), 1u + kFloorRounds) << r.algo;
    EXPECT_EQ(starts[0], DirectStart::kAfterUntimedRun) << r.algo;
    for (size_t i = 1; i < starts.size(); ++i) {
      EXPECT_EQ(starts[i], DirectStart::kAtSwitch) << r.algo << " sample " << i;
    }
  }
}

TEST_F(SearchBudgetTest, EverySampleOfATwoMemberPoolStartsAtASwitch) {
  Add(0, MathType::kFma, 0.100);
  Add(1, MathType::kFma, 0.101);
  Search(200);
  ExpectEveryRetimingSampleAtASwitch();
}

TEST_F(SearchBudgetTest, AThreeMemberPoolRotatesWhoGoesFirst) {
  options_.min_rounds = 3;
  Cost a, b, c;
  a.launch_ms = 0.100;
  b.launch_ms = 0.101;
  c.launch_ms = 0.102;
  // Noisy enough that the leader is not settled before the third round.
  a.noise = b.noise = c.noise = {1.0, 1.05, 0.95};
  Add(0, MathType::kFma, 0.100, a);
  Add(1, MathType::kFma, 0.101, b);
  Add(2, MathType::kFma, 0.102, c);
  Search(200);
  ASSERT_GE(timer_.retime_order.size(), 9u);
  EXPECT_EQ(std::vector<int>(timer_.retime_order.begin(),
                             timer_.retime_order.begin() + 9),
            (std::vector<int>{0, 1, 2, 1, 2, 0, 2, 0, 1}));
  ExpectEveryRetimingSampleAtASwitch();
}

TEST_F(SearchBudgetTest, APoolLedByTheLastScreenedStartsWithAnother) {
  // Find ranks 0 first, so 1 is screened last; its screen puts it ahead,
  // and the pool, led by 1, would start with the member just screened.
  Cost a, b;
  a.launch_ms = 0.110;
  b.launch_ms = 0.100;
  Add(0, MathType::kFma, 0.100, a);
  Add(1, MathType::kFma, 0.101, b);
  Search(200);
  ASSERT_FALSE(timer_.retime_order.empty());
  EXPECT_EQ(timer_.retime_order.front(), 0);
  ExpectEveryRetimingSampleAtASwitch();
}

TEST_F(SearchBudgetTest, AJoinerAfterAClearLeadersRoundStartsTheNextPass) {
  // A clear leader by Find and screen (steady calls) whose samples from the
  // switch put it behind the held-out rival: the rival joins, and the next
  // pass must not start with the leader right after its own round.
  Cost leader;
  leader.launch_ms = 0.100;
  leader.switch_ms = 1.0;  // + 0.083 ms a run over 12 runs
  Add(0, MathType::kFma, 0.100, leader);
  Add(1, MathType::kFma, 0.140);  // 40 % behind in Find and the screen
  Search(200);
  ASSERT_GE(timer_.retime_order.size(), 3u);
  EXPECT_EQ(timer_.retime_order[0], 0);  // the clear leader's one round
  EXPECT_EQ(timer_.retime_order[1], 1);  // the next pass starts at the joiner
  EXPECT_EQ(results_.front().algo, 1);
  ExpectEveryRetimingSampleAtASwitch(/*min_samples=*/1);
}

TEST_F(SearchBudgetTest, ACandidateWhoseFirstCallCostsMoreLosesToASteadyOne) {
  // Screened alone (after an untimed call) the host-heavy one is 5 % ahead;
  // from the switch its 0.6 ms first call puts it 43 % behind (0.15 against
  // 0.105 ms a run) over a 1.2 ms batch of 12 runs.
  AddHostHeavyAndSteady();
  Search(200);
  EXPECT_EQ(results_.front().algo, 0);
  EXPECT_GT(Result(1, MathType::kTensorOp).launch.median_ms, 0.14);
}

TEST_F(SearchBudgetTest, RetimingFromAnUntimedCallMeasuresTheSteadyCost) {
  options_.retime_start = DirectStart::kAfterUntimedRun;
  AddHostHeavyAndSteady();
  Search(200);
  EXPECT_EQ(results_.front().algo, 1);
  EXPECT_DOUBLE_EQ(Result(1, MathType::kTensorOp).launch.median_ms, 0.100);
}

TEST_F(SearchBudgetTest, AClearLeaderIsRetimedAloneForOneRound) {
  Add(0, MathType::kFma, 0.10);
  Add(1, MathType::kFma, 0.14);  // 40 % behind in Find and the screen
  Add(2, MathType::kFma, 0.25);
  Search(200);  // budget enough for every round: the plan, not it, decides
  const AlgoResult& leader = results_.front();
  EXPECT_EQ(leader.algo, 0);
  EXPECT_EQ(rounds_, 1);
  // One re-timing sample of each time: direct (launch, host) and replay.
  EXPECT_EQ(leader.launch.samples, 1);
  EXPECT_EQ(leader.host.samples, 1);
  EXPECT_EQ(leader.gpu.samples, 1);
  EXPECT_EQ(timer_.DirectSamples(leader), 2);  // the screen's and one more
  // The rivals keep their screened sample and have no GPU time.
  for (int algo : {1, 2}) {
    const AlgoResult& r = Result(algo, MathType::kFma);
    EXPECT_TRUE(r.retimed);
    EXPECT_EQ(r.launch.samples, 1);
    EXPECT_FALSE(r.gpu.measured());
    EXPECT_EQ(timer_.DirectSamples(r), 1);
  }
}

TEST_F(SearchBudgetTest, ALeaderOnlyFindCallsClearIsRetimedWithItsRival) {
  Add(0, MathType::kFma, 0.10);
  Cost rival;
  rival.launch_ms = 0.11;  // Find says 40 % behind, the screen 10 %
  Add(1, MathType::kFma, 0.14, rival);
  Search(200);
  EXPECT_GE(rounds_, kFloorRounds);
  EXPECT_GE(Result(0, MathType::kFma).launch.samples, kFloorRounds);
  EXPECT_GE(Result(1, MathType::kFma).launch.samples, kFloorRounds);
}

TEST_F(SearchBudgetTest, AHeldOutRivalThatWouldRankFirstIsRetimedAfterAll) {
  // A host-heavy leader: its short screening batch looks fast (0.08), its
  // re-timing batches are not (0.20); the rival, clearly behind by Find and
  // the screen (0.12), is then faster than the re-timed leader.
  Cost host_heavy;
  host_heavy.launch_ms = 0.20;
  host_heavy.screen_ms = 0.08;
  Add(0, MathType::kFma, 0.08, host_heavy);
  Add(1, MathType::kFma, 0.12);
  Search(200);
  const AlgoResult& first = results_.front();
  EXPECT_EQ(first.algo, 1);
  EXPECT_GE(first.launch.samples, kFloorRounds);
  EXPECT_TRUE(first.gpu.measured());
}

TEST_F(SearchBudgetTest, TwinsAreRetimedAsOne) {
  // Algorithm 0 under two math types, 0.5 % apart in Find and the screen;
  // algorithm 1 a near-tie of theirs.
  Add(0, MathType::kDefault, 0.100);
  Add(0, MathType::kFma, 0.1005);
  Add(1, MathType::kFma, 0.101);
  Search(200);
  EXPECT_GE(Result(0, MathType::kDefault).launch.samples, kFloorRounds);
  EXPECT_GE(Result(1, MathType::kFma).launch.samples, kFloorRounds);
  const AlgoResult& held = Result(0, MathType::kFma);
  EXPECT_EQ(held.launch.samples, 1);
  EXPECT_FALSE(held.gpu.measured());
  EXPECT_EQ(timer_.DirectSamples(held), 1);
}

TEST_F(SearchBudgetTest, TwinsOfAClearLeaderDoNotHideItsLead) {
  Add(0, MathType::kDefault, 0.100);
  Add(0, MathType::kFma, 0.1005);
  Add(1, MathType::kFma, 0.2);
  Search(200);
  EXPECT_EQ(rounds_, 1);
  EXPECT_EQ(results_.front().launch.samples, 1);
  EXPECT_EQ(Result(0, MathType::kFma).launch.samples, 1);
}

TEST_F(SearchBudgetTest, ScreeningStopsAtItsShareAfterTheFirstTwo) {
  for (int a = 0; a < 8; ++a) Add(a, MathType::kFma, 0.1 * (1 + 0.05 * a));
  Search(2);  // a 1 ms budget, less than verification's reserve
  int screened = 0;
  for (const AlgoResult& r : results_) screened += r.retimed;
  EXPECT_EQ(screened, 2);
}

TEST_F(SearchBudgetTest, ScreeningSkipsACandidateItsShareCannotPayFor) {
  Add(0, MathType::kFma, 0.7);
  Add(1, MathType::kFma, 0.72);
  Add(2, MathType::kFma, 2.0);  // within screen_ratio; a 4 ms screening
  Search(20);                   // a 10 ms budget: 3.3 ms for screening
  EXPECT_TRUE(Result(1, MathType::kFma).retimed);
  EXPECT_FALSE(Result(2, MathType::kFma).retimed);
  EXPECT_LE(screen_took_, Timing() * options_.screen_share);
}

// cuDNN's first choice (heuristic rank 1) whose Find time was its first
// call's, five times its steady cost (its kernels loaded then): outside the
// screen ratio, yet screened and re-timed beside the leader it nearly ties,
// so that Choose's rule compares samples taken alike and answers with it.
TEST_F(SearchBudgetTest, CudnnsFirstChoiceIsRetimedWhateverItsFirstCallCost) {
  Add(0, MathType::kFma, 0.100);
  Cost steady;
  steady.launch_ms = 0.101;
  Add(1, MathType::kFma, 0.500, steady);
  results_.back().heuristic_rank = 1;
  ASSERT_FALSE(WorthScreening(0.500, 0.100, options_));
  Search(200);
  const AlgoResult& first = Result(1, MathType::kFma);
  EXPECT_GE(first.launch.samples, kFloorRounds);
  EXPECT_TRUE(first.gpu.measured());
  EXPECT_NEAR(first.launch.median_ms, 0.101, 1e-9);
  const AlgoResult* chosen = ChooseFrom(results_, Constraints{});
  ASSERT_NE(chosen, nullptr);
  EXPECT_EQ(chosen->algo, 1);  // 1 % slower: within kMinGainOverHeuristic
}

TEST_F(SearchBudgetTest, CudnnsFirstChoiceJoinsAClearLeadersRound) {
  Add(0, MathType::kFma, 0.10);
  Add(1, MathType::kFma, 0.25);
  Cost slower;
  slower.launch_ms = 0.30;
  Add(2, MathType::kFma, 0.60, slower);
  results_.back().heuristic_rank = 1;
  Search(200);
  EXPECT_EQ(rounds_, 1);
  const AlgoResult& first = Result(2, MathType::kFma);
  EXPECT_EQ(timer_.DirectSamples(first), 2);  // screened, then one round
  EXPECT_TRUE(first.gpu.measured());
  EXPECT_FALSE(Result(1, MathType::kFma).gpu.measured());
  const AlgoResult* chosen = ChooseFrom(results_, Constraints{});
  ASSERT_NE(chosen, nullptr);
  EXPECT_EQ(chosen->algo, 0);  // 3x faster than cuDNN's first choice
}

}  // namespace
}  // namespace tunedb
