#include "bench/regret/choice_pairs.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "bench/regret/problem_set.h"
#include "gtest/gtest.h"
#include "store/record_json.h"

namespace tunedb::regret {
namespace {

ProblemSetSpec ResnetLayer() {
  ProblemSetSpec spec;
  spec.models = {"resnet18"};
  spec.batches = {8};
  spec.ops = "fwd";
  spec.limit = 1;
  return spec;
}

DeviceKey H200(int cudnn_version) {
  DeviceKey d;
  d.gpu_model = "NVIDIA H200";
  d.cc_major = 9;
  d.sm_count = 132;
  d.cudnn_version = cudnn_version;
  d.cuda_runtime_version = 13000;
  return d;
}

// A graph-API forward convolution with `k` output channels.
ConvProblem GraphProblem(int64_t k) {
  ConvProblem p = BuildProblemSet(ResnetLayer()).value().problems[0].problem;
  p.api = ConvApi::kGraph;
  p.alignment = 16;
  p.k = k;
  return p;
}

AlgoResult Config(int engine, int64_t knob, double ms) {
  AlgoResult r;
  r.algo = engine;
  r.knobs = {Knob{3, knob}};
  r.launch = {ms, 0, 5};
  r.gpu = {ms, 0, 5};
  return r;
}

// A full search's record of `results`, as exported.
std::string Line(const ProblemKey& key, std::vector<AlgoResult> results) {
  Record r;
  r.key = key;
  r.results = std::move(results);
  r.finder = "cudnn";
  r.repeats = 5;
  return RecordToJson(r);
}

std::string WriteFile(const std::string& name,
                      const std::vector<std::string>& lines) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream f(path);
  for (const std::string& line : lines) f << line << "\n\n";
  return path;
}

TEST(ChoicePairsTest, PairsTheGivenCudnnsKeysInTheJudgedFilesOrder) {
  const ProblemKey a{H200(91900), GraphProblem(64)};
  const ProblemKey b{H200(91900), GraphProblem(128)};
  const std::string judged = WriteFile(
      "judged.jsonl", {Line(b, {Config(5, 1, 0.1), Config(6, 0, 0.2)}),
                       Line(a, {Config(7, 2, 0.3)})});
  const std::string reference = WriteFile(
      "reference.jsonl", {Line(a, {Config(8, 0, 0.2), Config(7, 2, 0.3)}),
                          Line(b, {Config(5, 1, 0.1)})});
  absl::StatusOr<ChoicePairs> pairs = ReadChoicePairs(judged, reference, 91900);
  ASSERT_TRUE(pairs.ok()) << pairs.status();
  ASSERT_EQ(pairs->pairs.size(), 2u);
  EXPECT_EQ(pairs->pairs[0].key, b);
  EXPECT_TRUE(pairs->pairs[0].same_config());
  EXPECT_EQ(pairs->pairs[1].key, a);
  EXPECT_EQ(pairs->pairs[1].judged.algo, 7);
  EXPECT_EQ(pairs->pairs[1].reference.algo, 8);
  EXPECT_FALSE(pairs->pairs[1].same_config());
  std::remove(judged.c_str());
  std::remove(reference.c_str());
}

TEST(ChoicePairsTest, CountsOtherVersionsUnmatchedKeysAndRecordsWithoutAChoice) {
  const ProblemKey old_version{H200(91400), GraphProblem(64)};
  const ProblemKey unmatched{H200(91900), GraphProblem(96)};
  const ProblemKey failed{H200(91900), GraphProblem(128)};
  AlgoResult failure = Config(5, 0, 0);
  failure.status = AlgoStatus::kFailed;
  failure.error = "did not build";
  failure.launch = failure.gpu = Timing();
  const std::string judged =
      WriteFile("judged2.jsonl", {Line(old_version, {Config(5, 1, 0.1)}),
                                  Line(unmatched, {Config(5, 1, 0.1)}),
                                  Line(failed, {failure})});
  const std::string reference =
      WriteFile("reference2.jsonl", {Line(old_version, {Config(5, 1, 0.1)}),
                                     Line(failed, {Config(5, 1, 0.1)})});
  absl::StatusOr<ChoicePairs> pairs = ReadChoicePairs(judged, reference, 91900);
  ASSERT_TRUE(pairs.ok()) << pairs.status();
  EXPECT_TRUE(pairs->pairs.empty());
  EXPECT_EQ(pairs->other_version, 1);
  EXPECT_EQ(pairs->unmatched, 1);
  EXPECT_EQ(pairs->no_choice, 1);
  // Version 0 keeps every version.
  pairs = ReadChoicePairs(judged, reference, 0);
  ASSERT_TRUE(pairs.ok()) << pairs.status();
  EXPECT_EQ(pairs->pairs.size(), 1u);
  std::remove(judged.c_str());
  std::remove(reference.c_str());
}

TEST(ChoicePairsTest, ABadLineNamesItsFileAndLineAndAMissingFileIsNotFound) {
  const ProblemKey a{H200(91900), GraphProblem(64)};
  const std::string good = WriteFile("good.jsonl", {Line(a, {Config(5, 1, 1)})});
  const std::string bad = WriteFile("bad.jsonl", {"{\"format\":1}"});
  absl::StatusOr<ChoicePairs> pairs = ReadChoicePairs(good, bad, 0);
  ASSERT_EQ(pairs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(pairs.status().message().find("bad.jsonl:1: "), std::string::npos)
      << pairs.status();
  EXPECT_EQ(ReadChoicePairs(good, good + ".gone", 0).status().code(),
            absl::StatusCode::kNotFound);
  std::remove(good.c_str());
  std::remove(bad.c_str());
}

TEST(AgreementSummaryTest, CountsWithinTwoPercentOverTenPercentWorstAndGeomean) {
  const AgreementSummary s =
      SummarizeAgreement({0.97, 1.0, 1.02, 1.021, 1.2}, /*same_config=*/1);
  EXPECT_EQ(s.ratios.ratios, 5);
  EXPECT_EQ(s.within_tolerance, 3);  // 0.97 (faster), 1.0, 1.02
  EXPECT_DOUBLE_EQ(s.share_within(), 0.6);
  EXPECT_EQ(s.ratios.over_10pct, 1);
  EXPECT_DOUBLE_EQ(s.ratios.worst, 1.2);
  EXPECT_NEAR(s.ratios.geomean, std::pow(0.97 * 1.0 * 1.02 * 1.021 * 1.2, 0.2),
              1e-12);
  EXPECT_EQ(s.same_config, 1);
  EXPECT_EQ(SummarizeAgreement({}, 0).share_within(), 0);
}

}  // namespace
}  // namespace tunedb::regret
