// Ranking order and constraint-based choice.
#include "tunedb/record.h"

#include "common/record_results.h"
#include "gtest/gtest.h"

namespace tunedb {
namespace {

AlgoResult Ok(int algo, double ms, int64_t ws, bool det) {
  AlgoResult r;
  r.algo = algo;
  r.status = AlgoStatus::kOk;
  r.launch = {ms, 0, 1};
  r.gpu = {ms, 0, 1};
  r.workspace_bytes = ws;
  r.deterministic = det;
  return r;
}

AlgoResult NotSupported(int algo) {
  AlgoResult r;
  r.algo = algo;
  r.status = AlgoStatus::kNotSupported;
  return r;
}

Record Ranking() {
  Record r;
  r.results = {NotSupported(6), Ok(1, 2.0, 0, true), Ok(5, 0.5, 1 << 30, true),
               Ok(3, 1.0, 0, false), Ok(2, 1.5, 64 << 20, true)};
  SortResults(r.results);
  return r;
}

TEST(RecordTest, SortPutsOkFastestFirstThenUnsupported) {
  Record r = Ranking();
  ASSERT_EQ(r.results.size(), 5u);
  EXPECT_EQ(r.results[0].algo, 5);
  EXPECT_EQ(r.results[1].algo, 3);
  EXPECT_EQ(r.results[2].algo, 2);
  EXPECT_EQ(r.results[3].algo, 1);
  EXPECT_EQ(r.results[4].status, AlgoStatus::kNotSupported);
}

struct ChoiceCase {
  const char* name;
  Constraints constraints;
  int expected_algo;  // -1: none
};

class ChooseTest : public testing::TestWithParam<ChoiceCase> {};

TEST_P(ChooseTest, PicksFastestMeetingConstraints) {
  auto choice = Choose(Ranking(), GetParam().constraints);
  if (GetParam().expected_algo < 0) {
    EXPECT_FALSE(choice.has_value());
  } else {
    ASSERT_TRUE(choice.has_value());
    EXPECT_EQ(choice->algo, GetParam().expected_algo);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, ChooseTest,
    testing::Values(
        ChoiceCase{"Unlimited", {}, 5},
        ChoiceCase{"NoWorkspace", {int64_t{0}, false}, 3},
        ChoiceCase{"SixtyFourMiB", {int64_t{64} << 20, false}, 3},
        ChoiceCase{"DeterministicNoWorkspace", {int64_t{0}, true}, 1},
        ChoiceCase{"Deterministic64MiB", {int64_t{64} << 20, true}, 2},
        ChoiceCase{"DeterministicUnlimited", {std::nullopt, true}, 5}),
    [](const auto& info) { return info.param.name; });

TEST(RecordTest, ExcludedNumericalNotesSkipTheResultsThatHaveThem) {
  Record r = Ranking();
  // The fastest (5) uses tensor cores; 3 is nondeterministic.
  r.results[0].numerical_notes = NoteBit(kNumericalNoteTensorCore);
  r.results[1].numerical_notes = NoteBit(kNumericalNoteNondeterministic);
  Constraints c;
  EXPECT_EQ(Choose(r, c)->algo, 5);
  c.excluded_numerical_notes = NoteBit(kNumericalNoteTensorCore);
  EXPECT_EQ(Choose(r, c)->algo, 3);
  c.excluded_numerical_notes |= NoteBit(kNumericalNoteNondeterministic);
  EXPECT_EQ(Choose(r, c)->algo, 2);
  // A note no result has excludes nothing.
  c.excluded_numerical_notes = NoteBit(kNumericalNoteDownConvertInputs);
  EXPECT_EQ(Choose(r, c)->algo, 5);
}

// A runtime-compiled engine 0.01 ms faster per call than a precompiled one,
// whose build took 500 ms.
Record CompiledVersusPrecompiled() {
  Record r;
  AlgoResult compiled = Ok(5, 0.10, 0, true);
  compiled.behavior_notes = NoteBit(kBehaviorNoteRuntimeCompilation);
  compiled.build_ms = 500;
  AlgoResult precompiled = Ok(9, 0.11, 0, true);
  precompiled.build_ms = 0.2;
  r.results = {compiled, precompiled};
  SortResults(r.results);
  return r;
}

TEST(RecordTest, ACompileThatTheHorizonCannotRepayLosesToAPrecompiledEngine) {
  const Record r = CompiledVersusPrecompiled();
  Constraints c;
  // 10,000 calls: 500 ms / 10,000 = 0.05 ms per call, more than it saves.
  EXPECT_EQ(c.compile_horizon_calls, kDefaultCompileHorizonCalls);
  EXPECT_EQ(Choose(r, c)->algo, 9);
  // Over a million calls it repays its build (0.0005 ms per call).
  c.compile_horizon_calls = 1000000;
  EXPECT_EQ(Choose(r, c)->algo, 5);
  // Horizon 0: build time is not weighed (PyTorch's benchmark).
  c.compile_horizon_calls = 0;
  EXPECT_EQ(Choose(r, c)->algo, 5);
}

TEST(RecordTest, ACallerThatLoadsTheStoredPlanPaysNoCompile) {
  Record r = CompiledVersusPrecompiled();
  Constraints c;
  c.loads_stored_plans = true;
  // No plan kept: the caller would compile, so the build still counts.
  EXPECT_EQ(Choose(r, c)->algo, 9);
  for (AlgoResult& a : r.results) {
    if (a.algo == 5) a.plan = "tunedb-plan/1 ...";
  }
  EXPECT_EQ(Choose(r, c)->algo, 5);
  // One that does not load plans compiles whatever is stored.
  c.loads_stored_plans = false;
  EXPECT_EQ(Choose(r, c)->algo, 9);
}

TEST(RecordTest, ResultsWithoutABuildTimeAreNotCharged) {
  // Records stored before build times were measured: build_ms 0.
  Record r = CompiledVersusPrecompiled();
  for (AlgoResult& a : r.results) a.build_ms = 0;
  EXPECT_EQ(Choose(r, Constraints())->algo, 5);
}

// The heuristic's first choice (algo 2, 1.00 ms) and a tuned one.
Record HeuristicVersusTuned(double tuned_ms) {
  Record r;
  AlgoResult heuristic = Ok(2, 1.00, 0, true);
  heuristic.heuristic_rank = 1;
  AlgoResult second = Ok(4, 1.20, 0, true);
  second.heuristic_rank = 2;
  r.results = {heuristic, second, Ok(7, tuned_ms, 0, true)};
  SortResults(r.results);
  return r;
}

TEST(RecordTest, ATunedChoiceNotMeasurablyFasterYieldsToTheHeuristic) {
  // 1 % faster: within kMinGainOverHeuristic (2 %), so the heuristic's.
  EXPECT_EQ(Choose(HeuristicVersusTuned(0.99), Constraints())->algo, 2);
  // 5 % faster: the tuned choice.
  EXPECT_EQ(Choose(HeuristicVersusTuned(0.95), Constraints())->algo, 7);
  // Slower than the heuristic's: never chosen over it.
  EXPECT_EQ(Choose(HeuristicVersusTuned(1.10), Constraints())->algo, 2);
}

TEST(RecordTest, TheHeuristicsChoiceIsItsFirstThatMeetsTheConstraints) {
  Record r = HeuristicVersusTuned(0.99);
  for (AlgoResult& a : r.results) {
    if (a.algo == 2) a.workspace_bytes = 1 << 20;
  }
  Constraints c;
  c.max_workspace_bytes = 0;
  // Algo 2 needs workspace: the heuristic's choice is then algo 4 (1.20
  // ms), which the tuned 0.99 ms beats clearly.
  EXPECT_EQ(Choose(r, c)->algo, 7);
}

TEST(RecordTest, WithoutHeuristicRanksTheFastestIsChosen) {
  // Records stored before heuristic ranks were kept.
  Record r = HeuristicVersusTuned(0.99);
  for (AlgoResult& a : r.results) a.heuristic_rank = 0;
  EXPECT_EQ(Choose(r, Constraints())->algo, 7);
}

TEST(RecordTest, NegativeRecordChoosesNothing) {
  Record r;
  r.results = {NotSupported(0), NotSupported(1)};
  EXPECT_FALSE(r.supported());
  EXPECT_FALSE(Choose(r, {}).has_value());
  EXPECT_TRUE(Ranking().supported());
}

TEST(RecordTest, EnumNamesRoundTrip) {
  for (MathType m : {MathType::kDefault, MathType::kTensorOp,
                     MathType::kTensorOpAllowConversion, MathType::kFma}) {
    auto parsed = ParseMathType(MathTypeName(m));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, m);
  }
  for (AlgoStatus s :
       {AlgoStatus::kOk, AlgoStatus::kNotSupported, AlgoStatus::kFailed}) {
    auto parsed = ParseAlgoStatus(AlgoStatusName(s));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, s);
  }
  EXPECT_FALSE(ParseMathType("quantum").ok());
}

// The measured case on an H200 (fp16 NHWC n8 c256 14x14 k256 1x1):
// algorithm 1 needs 3.0 us of GPU time but 113.9 us per direct call; 0 needs
// 38.7 us of GPU time and 39.7 us per call.
Record HostHeavyCase() {
  Record r;
  AlgoResult host_heavy = Ok(1, 0, 0, true);
  host_heavy.launch = {0.1139, 0.002, 15};
  host_heavy.gpu = {0.0030, 0.0001, 15};
  host_heavy.host = {0.1139, 0.002, 15};
  AlgoResult gpu_heavy = Ok(0, 0, 0, true);
  gpu_heavy.launch = {0.0397, 0.001, 15};
  gpu_heavy.gpu = {0.0387, 0.001, 15};
  gpu_heavy.host = {0.0189, 0.001, 15};
  r.results = {host_heavy, gpu_heavy};
  SortResults(r.results);
  return r;
}

TEST(RecordTest, DirectCallersGetTheLowestLaunchTime) {
  const Record r = HostHeavyCase();
  EXPECT_EQ(r.results[0].algo, 0) << "the ranking is by launch time";
  std::optional<AlgoResult> choice = Choose(r, Constraints());
  ASSERT_TRUE(choice.has_value());
  EXPECT_EQ(choice->algo, 0);
  EXPECT_DOUBLE_EQ(choice->cost(LaunchMode::kDirect).median_ms, 0.0397);
}

TEST(RecordTest, GraphCallersGetTheLowestGpuTime) {
  Constraints graph;
  graph.launch_mode = LaunchMode::kGraph;
  std::optional<AlgoResult> choice = Choose(HostHeavyCase(), graph);
  ASSERT_TRUE(choice.has_value());
  EXPECT_EQ(choice->algo, 1);
  EXPECT_DOUBLE_EQ(choice->cost(LaunchMode::kGraph).median_ms, 0.0030);
}

TEST(RecordTest, ResultsWithoutLaunchTimeAreRankedByGpuTime) {
  // A record measured before launch timing has GPU time only.
  Record r = HostHeavyCase();
  for (AlgoResult& a : r.results) a.launch = Timing{};
  SortResults(r.results);
  EXPECT_EQ(r.results[0].algo, 1);
  EXPECT_EQ(Choose(r, Constraints())->algo, 1);
  EXPECT_EQ(&r.results[0].cost(LaunchMode::kDirect), &r.results[0].gpu);
}

TEST(RecordTest, TimingVersionIsCurrentOnlyWhenEveryOkResultHasALaunchTime) {
  Record r = HostHeavyCase();
  EXPECT_EQ(TimingVersionOf(r.results), kCurrentTimingVersion);
  r.results.push_back(NotSupported(4));  // nothing to time
  EXPECT_EQ(TimingVersionOf(r.results), kCurrentTimingVersion);
  r.results[1].launch = Timing{};
  EXPECT_EQ(TimingVersionOf(r.results), 1);
  EXPECT_EQ(TimingVersionOf({}), kCurrentTimingVersion);
}

TEST(RecordTest, StaleMeansAnOlderTimingVersion) {
  Record r;
  EXPECT_FALSE(r.stale());
  r.timing_version = 1;
  EXPECT_TRUE(r.stale());
}

TEST(RecordTest, LaunchModeNamesParseBack) {
  for (LaunchMode m : {LaunchMode::kDirect, LaunchMode::kGraph}) {
    EXPECT_EQ(ParseLaunchMode(LaunchModeName(m)).value(), m);
  }
  EXPECT_FALSE(ParseLaunchMode("eager").ok());
}

}  // namespace
}  // namespace tunedb
