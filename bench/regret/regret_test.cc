// The host side of tunedb_regret (no GPU): problem generation and
// deduplication, the ratios and their summaries, the CSV and the flags.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bench/regret/group_summary.h"
#include "bench/regret/problem_measurement.h"
#include "bench/regret/problem_set.h"
#include "bench/regret/regret_flags.h"
#include "bench/regret/regret_report.h"
#include "gtest/gtest.h"
#include "tuner/training_problems.h"

namespace tunedb::regret {
namespace {

ProblemSetSpec Resnet18Forward() {
  ProblemSetSpec spec;
  spec.models = {"resnet18"};
  spec.batches = {8};
  spec.ops = "fwd";
  return spec;
}

TEST(ProblemSetTest, ModelProblemsAreDeduplicatedInModelOrder) {
  absl::StatusOr<ProblemSet> set = BuildProblemSet(Resnet18Forward());
  ASSERT_TRUE(set.ok()) << set.status();
  // resnet18 has 20 convolutions; layer1's four 3x3 convs are one problem.
  EXPECT_GT(set->duplicates, 0);
  EXPECT_EQ(set->problems.size() + set->duplicates, 20u);
  std::set<std::string> texts;
  for (const RegretProblem& p : set->problems) {
    EXPECT_TRUE(texts.insert(p.problem.ToText()).second) << p.source;
    EXPECT_EQ(p.set, "resnet18");
    EXPECT_EQ(p.problem.n, 8);
    EXPECT_EQ(p.problem.op, ConvOp::kForward);
  }
  EXPECT_EQ(set->problems[0].problem.c, 3);  // conv1 first
  EXPECT_EQ(set->dropped_by_limit, 0);
}

TEST(ProblemSetTest, LimitKeepsTheFirstUniqueProblems) {
  ProblemSetSpec spec = Resnet18Forward();
  const ProblemSet all = *BuildProblemSet(spec);
  spec.limit = 3;
  absl::StatusOr<ProblemSet> cut = BuildProblemSet(spec);
  ASSERT_TRUE(cut.ok()) << cut.status();
  ASSERT_EQ(cut->problems.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(cut->problems[i].problem, all.problems[i].problem);
  }
  EXPECT_EQ(cut->dropped_by_limit,
            static_cast<int64_t>(all.problems.size()) - 3);
}

TEST(ProblemSetTest, EveryCombinationOfBatchDtypeAndLayout) {
  ProblemSetSpec spec = Resnet18Forward();
  const size_t one = BuildProblemSet(spec)->problems.size();
  spec.batches = {8, 32};
  spec.dtypes = {"fp32", "fp16"};
  spec.layouts = {"nchw", "nhwc"};
  absl::StatusOr<ProblemSet> set = BuildProblemSet(spec);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->problems.size(), 8 * one);
  std::set<std::string> labels;
  for (const RegretProblem& p : set->problems) {
    labels.insert(DtypeLabel(p.problem) + "/" +
                  std::string(LayoutName(p.problem.layout)));
  }
  EXPECT_EQ(labels, (std::set<std::string>{"fp16/nchw", "fp16/nhwc",
                                           "fp32/nchw", "fp32/nhwc"}));
}

TEST(ProblemSetTest, ProblemsFileOfKeyTextsIsReadAndDeduplicated) {
  const std::string path = ::testing::TempDir() + "/heldout.keys";
  ConvProblem a = BuildProblemSet(Resnet18Forward())->problems[0].problem;
  ConvProblem b = a;
  b.k = 96;
  {
    std::ofstream f(path);
    f << "# held-out shapes\n"
      << a.ToText() << "\n"
      << b.ToText() << "\n"
      << a.ToText() << "\n";
  }
  ProblemSetSpec spec;
  spec.problems_file = path;
  absl::StatusOr<ProblemSet> set = BuildProblemSet(spec);
  std::remove(path.c_str());
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ(set->problems.size(), 2u);
  EXPECT_EQ(set->duplicates, 1);
  EXPECT_EQ(set->problems[0].problem, a);
  EXPECT_EQ(set->problems[1].problem, b);
  EXPECT_EQ(set->problems[1].set, "heldout.keys");
  EXPECT_EQ(set->problems[1].source, "heldout.keys:3");
}

TEST(ProblemSetTest, BadInputNamesTheFlag) {
  ProblemSetSpec spec = Resnet18Forward();
  spec.models = {"resnet-9000"};
  absl::StatusOr<ProblemSet> set = BuildProblemSet(spec);
  ASSERT_FALSE(set.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(set.status()));
  EXPECT_NE(set.status().message().find("--model"), std::string::npos);

  spec = Resnet18Forward();
  spec.dtypes = {"fp8"};
  EXPECT_NE(BuildProblemSet(spec).status().message().find("--dtype"),
            std::string::npos);
  spec = Resnet18Forward();
  spec.layouts = {"chwn"};
  EXPECT_NE(BuildProblemSet(spec).status().message().find("--layout"),
            std::string::npos);
  EXPECT_TRUE(absl::IsInvalidArgument(BuildProblemSet({}).status()));
  spec = {};
  spec.problems_file = ::testing::TempDir() + "/no-such-file.keys";
  EXPECT_TRUE(absl::IsNotFound(BuildProblemSet(spec).status()));
}

TEST(DtypeLabelTest, NamesEveryPresetAsThePresetIsNamed) {
  for (tuner::DtypePreset preset :
       {tuner::DtypePreset::kFp32, tuner::DtypePreset::kFp32NoTf32,
        tuner::DtypePreset::kFp16, tuner::DtypePreset::kBf16}) {
    ConvProblem p;
    tuner::ApplyDtypePreset(preset, p);
    EXPECT_EQ(DtypeLabel(p), tuner::DtypePresetName(preset));
  }
  ConvProblem p;
  tuner::ApplyDtypePreset(tuner::DtypePreset::kFp16, p);
  p.allow_tensor_cores = false;
  EXPECT_EQ(DtypeLabel(p), "fp16-no-tc");
}

TEST(SummarizeRatiosTest, CountsStrictlySlowerPicksWorstAndGeomean) {
  const PickSummary s = SummarizeRatios({1.0, 1.05, 1.06, 1.10, 1.5});
  EXPECT_EQ(s.ratios, 5);
  EXPECT_EQ(s.over_5pct, 3);   // 1.06, 1.10, 1.5
  EXPECT_EQ(s.over_10pct, 1);  // 1.5
  EXPECT_DOUBLE_EQ(s.worst, 1.5);
  EXPECT_NEAR(s.geomean, std::pow(1.0 * 1.05 * 1.06 * 1.10 * 1.5, 0.2), 1e-12);
}

TEST(SummarizeRatiosTest, NoRatiosIsAllZero) {
  const PickSummary s = SummarizeRatios({});
  EXPECT_EQ(s.ratios, 0);
  EXPECT_EQ(s.worst, 0);
  EXPECT_EQ(s.geomean, 0);
}

TimedCandidate Timed(int algo, MathType math, double median_ms) {
  TimedCandidate c;
  c.algo = algo;
  c.math = math;
  c.samples_ms = {median_ms};
  c.median_ms = median_ms;
  return c;
}

void SetPick(ProblemMeasurement& m, PickKind kind, int algo, MathType math) {
  Pick& p = m.pick(kind);
  p.found = true;
  p.algo = algo;
  p.math = math;
}

// A measured problem: candidates 1 (1.0 ms), 2 (1.2 ms), 6 (2.0 ms) under
// FMA; tunedb picked 1, cudnnFind 2, the heuristic 6.
ProblemMeasurement Measured(const std::string& set, ConvOp op, Layout layout) {
  ProblemMeasurement m;
  m.problem.set = set;
  m.problem.source = set + "/layer";
  m.problem.problem.op = op;
  m.problem.problem.layout = layout;
  m.candidates = {Timed(2, MathType::kFma, 1.2), Timed(1, MathType::kFma, 1.0),
                  Timed(6, MathType::kFma, 2.0)};
  SetPick(m, PickKind::kTunedb, 1, MathType::kFma);
  SetPick(m, PickKind::kFind, 2, MathType::kFma);
  SetPick(m, PickKind::kHeuristic, 6, MathType::kFma);
  m.search_s = 2;
  m.find_s = 0.5;
  return m;
}

TEST(PickRatioTest, IsThePicksMedianOverTheBest) {
  ProblemMeasurement m = Measured("resnet18", ConvOp::kForward, Layout::kNCHW);
  EXPECT_EQ(BestCandidate(m)->algo, 1);
  EXPECT_DOUBLE_EQ(*PickRatio(m, PickKind::kTunedb), 1.0);
  EXPECT_DOUBLE_EQ(*PickRatio(m, PickKind::kFind), 1.2);
  EXPECT_DOUBLE_EQ(*PickRatio(m, PickKind::kHeuristic), 2.0);
}

TEST(PickRatioTest, NoneForAMissingPickOrAnUntimedCandidate) {
  ProblemMeasurement m = Measured("resnet18", ConvOp::kForward, Layout::kNCHW);
  m.pick(PickKind::kFind) = Pick{};
  EXPECT_FALSE(PickRatio(m, PickKind::kFind).has_value());
  m.candidates[2].error = "failed";
  m.candidates[2].samples_ms.clear();
  EXPECT_FALSE(PickRatio(m, PickKind::kHeuristic).has_value());
  // The same algorithm under another math type is another candidate.
  SetPick(m, PickKind::kTunedb, 1, MathType::kDefault);
  EXPECT_FALSE(PickRatio(m, PickKind::kTunedb).has_value());
}

TEST(SummarizeTest, GroupsBySetPassDtypeLayoutThenOverallByPassAndDtype) {
  std::vector<ProblemMeasurement> ms = {
      Measured("resnet18", ConvOp::kForward, Layout::kNCHW),
      Measured("vgg16", ConvOp::kForward, Layout::kNCHW),
      Measured("resnet18", ConvOp::kBackwardData, Layout::kNCHW),
      Measured("resnet18", ConvOp::kForward, Layout::kNCHW),
  };
  ms[3].pick(PickKind::kFind).algo = 1;  // this time cudnnFind found the best
  ProblemMeasurement failed =
      Measured("vgg16", ConvOp::kForward, Layout::kNCHW);
  failed.error = "tunedb search: out of memory";
  failed.search_s = 100;
  ms.push_back(failed);

  const std::vector<GroupSummary> rows = Summarize(ms);
  ASSERT_EQ(rows.size(), 5u);  // 3 groups, 2 overall rows
  const GroupSummary& fwd = rows[0];
  EXPECT_EQ(fwd.set, "resnet18");
  EXPECT_EQ(fwd.pass, "fwd");
  EXPECT_EQ(fwd.dtype, "fp32");
  EXPECT_EQ(fwd.layout, "nchw");
  EXPECT_FALSE(fwd.overall);
  EXPECT_EQ(fwd.problems, 2);
  EXPECT_EQ(fwd.measured, 2);
  const PickSummary& find = fwd.pick(PickKind::kFind);
  EXPECT_EQ(find.ratios, 2);
  EXPECT_EQ(find.over_5pct, 1);
  EXPECT_EQ(find.over_10pct, 1);
  EXPECT_DOUBLE_EQ(find.worst, 1.2);
  EXPECT_NEAR(find.geomean, std::sqrt(1.2), 1e-12);
  EXPECT_EQ(fwd.pick(PickKind::kTunedb).over_5pct, 0);
  EXPECT_DOUBLE_EQ(fwd.search_s, 4);
  EXPECT_DOUBLE_EQ(fwd.find_s, 1);
  EXPECT_DOUBLE_EQ(fwd.SearchOverFind(), 4);

  const GroupSummary& vgg = rows[1];
  EXPECT_EQ(vgg.set, "vgg16");
  EXPECT_EQ(vgg.problems, 2);
  EXPECT_EQ(vgg.measured, 1);
  EXPECT_EQ(vgg.errors, 1);
  EXPECT_DOUBLE_EQ(vgg.search_s, 2);  // the failed search is not counted

  EXPECT_EQ(rows[2].pass, "bwd_data");
  const GroupSummary& all_fwd = rows[3];
  EXPECT_TRUE(all_fwd.overall);
  EXPECT_EQ(all_fwd.set, "all");
  EXPECT_EQ(all_fwd.layout, "all");
  EXPECT_EQ(all_fwd.pass, "fwd");
  EXPECT_EQ(all_fwd.problems, 4);
  EXPECT_EQ(all_fwd.measured, 3);
  EXPECT_EQ(all_fwd.pick(PickKind::kHeuristic).over_10pct, 3);
  EXPECT_EQ(rows[4].pass, "bwd_data");
  EXPECT_TRUE(rows[4].overall);
}

TEST(SummarizeTest, AMissingPickIsCountedApartFromTheRatios) {
  std::vector<ProblemMeasurement> ms = {
      Measured("resnet18", ConvOp::kForward, Layout::kNCHW)};
  ms[0].pick(PickKind::kHeuristic) = Pick{};
  const GroupSummary& g = Summarize(ms)[0];
  EXPECT_EQ(g.pick(PickKind::kHeuristic).ratios, 0);
  EXPECT_EQ(g.pick(PickKind::kHeuristic).missing, 1);
  EXPECT_EQ(g.pick(PickKind::kTunedb).missing, 0);
}

TEST(RegretReportTest, CsvHasAHeaderAndOneRowPerProblem) {
  std::vector<ProblemMeasurement> ms = {
      Measured("resnet18", ConvOp::kForward, Layout::kNCHW),
      Measured("vgg16", ConvOp::kForward, Layout::kNHWC)};
  std::ostringstream csv;
  WriteCsv(csv, ms);
  std::vector<std::string> lines;
  std::istringstream in(csv.str());
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].rfind("set,source,pass,dtype,layout,key,best_algo", 0),
            0u);
  EXPECT_NE(lines[0].find("cudnnFind_ratio"), std::string::npos);
  EXPECT_EQ(lines[2].rfind("vgg16,vgg16/layer,fwd,fp32,nhwc,", 0), 0u);
  EXPECT_NE(lines[1].find(",1.2,"), std::string::npos);  // cudnnFind's ratio
}

TEST(RegretReportTest, JsonHoldsEveryMeasurementAndSummary) {
  std::vector<ProblemMeasurement> ms = {
      Measured("resnet18", ConvOp::kForward, Layout::kNCHW)};
  RunInfo info;
  info.command_line = "tunedb_regret --model resnet18";
  info.device.key.cudnn_version = 91900;
  const nlohmann::json j = ReportJson(info, ms, Summarize(ms));
  EXPECT_EQ(j["run"]["cudnn_version_text"], "9.19.0");
  ASSERT_EQ(j["problems"].size(), 1u);
  EXPECT_DOUBLE_EQ(j["problems"][0]["picks"]["heuristic"]["ratio"], 2.0);
  EXPECT_EQ(j["problems"][0]["candidates"].size(), 3u);
  EXPECT_EQ(j["summaries"].size(), 2u);
  EXPECT_EQ(j["summaries"][1]["tunedb"]["geomean_ratio"], 1.0);
}

TEST(RegretReportTest, JsonHasTheSwitchMatrixOnlyWhereMeasured) {
  ProblemMeasurement m = Measured("resnet18", ConvOp::kForward, Layout::kNCHW);
  EXPECT_FALSE(MeasurementToJson(m).contains("switch_matrix"));
  SwitchMatrixResult& s = m.switch_matrix.emplace();
  s.members = {{1, MathType::kTensorOp, 0.06}, {0, MathType::kFma, 0.09}};
  s.first_ms = {{0.07, 0.10}, {0.16, 0.095}};
  s.first_host_ms = {{0.05, 0.02}, {0.14, 0.02}};
  s.run_host_ms = {{0.16, 0.06}, {0.02, 0.02}};
  s.alternating_host_ms = {{0.07, 0.07}, {0.02, 0.02}};
  const nlohmann::json j = MeasurementToJson(m)["switch_matrix"];
  ASSERT_EQ(j["members"].size(), 2u);
  EXPECT_EQ(j["members"][0]["math"], "tensor_op");
  EXPECT_DOUBLE_EQ(j["members"][0]["steady_ms"], 0.06);
  // first_ms: row the member before, column the member timed.
  EXPECT_DOUBLE_EQ(j["first_ms"][1][0], 0.16);
  // run_host_ms: row the member, column the call.
  EXPECT_DOUBLE_EQ(j["run_host_ms"][0][0], 0.16);
  EXPECT_FALSE(j.contains("error"));
  s.error = "no timed candidate";
  EXPECT_EQ(MeasurementToJson(m)["switch_matrix"]["error"],
            "no timed candidate");
}

std::optional<int> Parse(std::vector<const char*> args, RegretFlags* flags,
                         std::string* err = nullptr) {
  args.insert(args.begin(), "tunedb_regret");
  std::ostringstream out, error;
  std::optional<int> exit = ParseRegretFlags(static_cast<int>(args.size()),
                                             args.data(), flags, out, error);
  if (err != nullptr) *err = error.str();
  return exit;
}

TEST(RegretFlagsTest, CommaListsAndTimingOptions) {
  RegretFlags f;
  ASSERT_FALSE(Parse({"--model", "resnet50,vgg16", "--batch", "8,32,64",
                      "--ops", "fwd,bwd_data", "--dtype", "fp32,bf16",
                      "--layout", "nchw,nhwc", "--limit", "40", "--rounds", "5",
                      "--launch-mode", "graph", "--json", "o.json"},
                     &f)
                   .has_value());
  EXPECT_EQ(f.problems.models, (std::vector<std::string>{"resnet50", "vgg16"}));
  EXPECT_EQ(f.problems.batches, (std::vector<int64_t>{8, 32, 64}));
  EXPECT_EQ(f.problems.ops, "fwd,bwd_data");
  EXPECT_EQ(f.problems.dtypes, (std::vector<std::string>{"fp32", "bf16"}));
  EXPECT_EQ(f.problems.layouts, (std::vector<std::string>{"nchw", "nhwc"}));
  EXPECT_EQ(f.problems.limit, 40);
  EXPECT_EQ(f.truth.rounds, 5);
  EXPECT_EQ(f.truth.batch.mode, LaunchMode::kGraph);
  EXPECT_EQ(f.json_path, "o.json");
  EXPECT_NE(f.command_line.find("--launch-mode graph"), std::string::npos);
}

TEST(RegretFlagsTest, DefaultsTimeDirectLaunchesFifteenRounds) {
  RegretFlags f;
  ASSERT_FALSE(Parse({"--model", "resnet18"}, &f).has_value());
  EXPECT_EQ(f.truth.rounds, 15);
  EXPECT_EQ(f.truth.batch.mode, LaunchMode::kDirect);
  EXPECT_DOUBLE_EQ(f.truth.batch.min_sample_ms, 1.0);
}

TEST(RegretFlagsTest, TheTruthIsShuffledAndTheSearchSamplesFromTheSwitch) {
  RegretFlags f;
  ASSERT_FALSE(Parse({"--model", "resnet18"}, &f).has_value());
  EXPECT_EQ(f.truth.order, TruthOrder::kShuffled);
  EXPECT_EQ(f.retime_start, DirectStart::kAtSwitch);
  EXPECT_EQ(f.switch_matrix.candidates, 0);
}

TEST(RegretFlagsTest, TimingStudyFlagsSetTheOrderTheSearchAndTheMatrix) {
  RegretFlags f;
  ASSERT_FALSE(Parse({"--model", "resnet18", "--truth-order", "rotating",
                      "--search-retime-start", "untimed-run", "--switch-matrix",
                      "4", "--switch-reps", "3"},
                     &f)
                   .has_value());
  EXPECT_EQ(f.truth.order, TruthOrder::kRotating);
  EXPECT_EQ(f.retime_start, DirectStart::kAfterUntimedRun);
  EXPECT_EQ(f.switch_matrix.candidates, 4);
  EXPECT_EQ(f.switch_matrix.reps, 3);
  RegretFlags bad;
  EXPECT_EQ(Parse({"--truth-order", "random"}, &bad), kExitUsage);
  EXPECT_EQ(Parse({"--search-retime-start", "never"}, &bad), kExitUsage);
  EXPECT_EQ(Parse({"--switch-matrix", "33"}, &bad), kExitUsage);
}

TEST(RegretFlagsTest, BadFlagsAreUsageErrorsAndHelpIsNot) {
  RegretFlags f;
  EXPECT_EQ(Parse({"--launch-mode", "events"}, &f), kExitUsage);
  EXPECT_EQ(Parse({"--rounds", "0"}, &f), kExitUsage);
  EXPECT_EQ(Parse({"--no-such-flag"}, &f), kExitUsage);
  EXPECT_EQ(Parse({"--help"}, &f), kExitOk);
}

}  // namespace
}  // namespace tunedb::regret
