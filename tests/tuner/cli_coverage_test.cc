// `tunedb coverage` against an in-process daemon on the simulated finder:
// a model half tuned lists exactly the other half and exits with the gaps
// code; a tuned model exits 0; predictions and the output forms.
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tuner/cli_test_fixture.h"
#include "tuner/exit_codes.h"

namespace tunedb::tuner {
namespace {

using ::testing::HasSubstr;

class CoverageTest : public CliTest {
 protected:
  // The problem texts `prewarm --dry-run` plans for `flags`.
  std::vector<std::string> Planned(const std::vector<std::string>& flags) {
    std::vector<std::string> args = {"--json", "prewarm", "--dry-run"};
    args.insert(args.end(), flags.begin(), flags.end());
    CliResult plan = Run(args);
    EXPECT_EQ(plan.code, kExitOk) << plan.err;
    std::vector<std::string> problems;
    for (const auto& item : plan.Json()) {
      problems.push_back(item["problem"].get<std::string>());
    }
    return problems;
  }

  // Tunes `problems` (problem texts) through prewarm and a shape file.
  void Tune(const std::vector<std::string>& problems, const std::string& name) {
    std::string text;
    for (const std::string& p : problems) text += p + "\n";
    CliResult tuned = Run({"--json", "prewarm", "--file", WriteFile(name, text),
                           "--format", "text", "--no-progress"});
    ASSERT_EQ(tuned.code, kExitOk) << tuned.err;
    ASSERT_EQ(tuned.Json()["searched"], problems.size());
  }

  static std::set<std::string> GapProblems(const nlohmann::json& j) {
    std::set<std::string> gaps;
    for (const auto& g : j["gaps"]) gaps.insert(g["problem"].get<std::string>());
    return gaps;
  }
};

const std::vector<std::string> kResnet50 = {"-m", "resnet50", "--batch", "64",
                                            "--dtype", "fp16"};

TEST_F(CoverageTest, HalfTunedModelListsExactlyTheOtherHalfAndExitsWithGaps) {
  const std::vector<std::string> planned = Planned(kResnet50);
  // 53 convs, three passes each, many repeated shapes: 68 unique.
  ASSERT_GT(planned.size(), 50u);
  std::vector<std::string> tuned, untuned;
  for (size_t i = 0; i < planned.size(); ++i) {
    (i % 2 == 0 ? tuned : untuned).push_back(planned[i]);
  }
  Tune(tuned, "half.txt");

  std::vector<std::string> args = {"--json", "coverage"};
  args.insert(args.end(), kResnet50.begin(), kResnet50.end());
  CliResult coverage = Run(args);
  ASSERT_EQ(coverage.code, kExitGaps) << coverage.err;
  const nlohmann::json j = coverage.Json();
  EXPECT_EQ(j["problems"], planned.size());
  EXPECT_EQ(j["stored"], tuned.size());
  EXPECT_EQ(j["not_stored"], untuned.size());
  EXPECT_EQ(j["covered"], false);
  EXPECT_EQ(GapProblems(j),
            std::set<std::string>(untuned.begin(), untuned.end()));
  // The gaps come in plan order, each with where it came from.
  ASSERT_EQ(j["gaps"].size(), untuned.size());
  EXPECT_EQ(j["gaps"][0]["problem"], untuned[0]);
  EXPECT_THAT(j["gaps"][0]["source"].get<std::string>(),
              HasSubstr("resnet50/"));

  Tune(untuned, "rest.txt");
  CliResult full = Run(args);
  ASSERT_EQ(full.code, kExitOk) << full.err;
  EXPECT_EQ(full.Json()["covered"], true);
  EXPECT_EQ(full.Json()["stored"], planned.size());
  EXPECT_TRUE(full.Json()["gaps"].empty());
}

TEST_F(CoverageTest, TableAndCsvListTheGaps) {
  const std::vector<std::string> planned =
      Planned({"-m", "resnet18", "--batch", "2", "--ops", "fwd"});
  Tune({planned.begin() + 1, planned.end()}, "all_but_one.txt");
  CliResult text =
      Run({"coverage", "-m", "resnet18", "--batch", "2", "--ops", "fwd"});
  ASSERT_EQ(text.code, kExitGaps) << text.err;
  EXPECT_THAT(text.out, HasSubstr("resnet18/conv1 fwd"));
  EXPECT_THAT(text.out, HasSubstr(std::to_string(planned.size()) +
                                  " problems for"));
  EXPECT_THAT(text.out, HasSubstr("1 not tuned"));

  CliResult csv = Run(
      {"coverage", "-m", "resnet18", "--batch", "2", "--ops", "fwd", "--csv"});
  ASSERT_EQ(csv.code, kExitGaps) << csv.err;
  EXPECT_EQ(csv.out.rfind("source,key_hash,op,", 0), 0u) << csv.out;
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 2) << csv.out;
  EXPECT_THAT(csv.out, HasSubstr(planned[0]));
}

TEST_F(CoverageTest, GapsNearTunedShapesAreListedWithTheirPrediction) {
  // Tuned at batch 64; batch 32 is near (graph API keys are predicted).
  CliResult tuned =
      Run({"--json", "prewarm", "-m", "resnet18", "--batch", "64", "--ops",
           "fwd", "--api", "graph", "--no-progress"});
  ASSERT_EQ(tuned.code, kExitOk) << tuned.err;
  const std::vector<std::string> near = {"coverage", "-m", "resnet18",
                                         "--batch", "32", "--ops", "fwd",
                                         "--api", "graph"};
  std::vector<std::string> args = {"--json"};
  args.insert(args.end(), near.begin(), near.end());
  CliResult coverage = Run(args);
  ASSERT_EQ(coverage.code, kExitGaps) << coverage.err;
  const nlohmann::json j = coverage.Json();
  EXPECT_EQ(j["stored"], 0);
  EXPECT_GT(j["predicted"].get<int64_t>(), 0) << j.dump(2);
  int64_t with_prediction = 0;
  for (const auto& g : j["gaps"]) {
    if (g["predicted"].is_null()) continue;
    ++with_prediction;
    EXPECT_FALSE(g["predicted"]["config"].get<std::string>().empty());
    EXPECT_GT(g["predicted"]["confidence"].get<double>(), 0);
  }
  EXPECT_EQ(with_prediction, j["predicted"]);

  args.push_back("--no-predict");
  CliResult plain = Run(args);
  ASSERT_EQ(plain.code, kExitGaps) << plain.err;
  EXPECT_EQ(plain.Json()["predicted"], 0);
  EXPECT_EQ(plain.Json()["not_stored"], j["not_stored"]);
}

TEST_F(CoverageTest, NeedsAModelOrAShapeFile) {
  CliResult none = Run({"coverage"});
  EXPECT_EQ(none.code, kExitUsage);
  EXPECT_THAT(none.err, HasSubstr("--model"));
}

}  // namespace
}  // namespace tunedb::tuner
