// `tunedb diff` against an in-process daemon: records of a made-up older
// cuDNN version (the daemon's own, exported, renamed and one ranking
// changed, imported back) against the daemon's.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/tuner/cli_test_fixture.h"
#include "tuner/choice_diff.h"
#include "tuner/exit_codes.h"

namespace tunedb::tuner {
namespace {

using ::testing::HasSubstr;

class DiffTest : public CliTest {};

TEST_F(DiffTest, AChangedChoiceIsCountedWithItsSpeedupAndTheRestAreTheSame) {
  ASSERT_EQ(Run({"prewarm", "--model", "resnet18", "--batch", "2", "--ops",
                 "fwd"})
                .code,
            kExitOk);
  // The same records as cuDNN 9.14.0's, the first one's fastest result made
  // 100 times slower there: its old choice is another algorithm.
  int records = 0;
  const std::string old_version = ExportedAsCudnn914(
      [](int i, nlohmann::json& j) {
        if (i == 0) SlowFirstResult(j, 100);
      },
      &records);
  ASSERT_GT(records, 3);
  ASSERT_EQ(Run({"import", WriteFile("old.jsonl", old_version)}).code,
            kExitOk);

  CliResult diff = Run({"--json", "diff", "--from", "9.14", "--to", "9.19.0",
                        "--keys"});
  ASSERT_EQ(diff.code, kExitOk) << diff.err;
  const nlohmann::json j = diff.Json();
  EXPECT_EQ(j["only_from"], 0);
  EXPECT_EQ(j["only_to"], 0);
  ASSERT_EQ(j["groups"].size(), 1u);
  const nlohmann::json& g = j["groups"][0];
  EXPECT_EQ(g["group"], "legacy fwd f32");
  EXPECT_EQ(g["keys"], records);
  EXPECT_EQ(g["changed"], 1);
  ASSERT_EQ(g["changed_keys"].size(), 1u);
  EXPECT_GT(g["changed_keys"][0]["speedup"].get<double>(), 1.0);

  CliResult table = Run({"diff", "--from", "9.14", "--to", "9.19"});
  ASSERT_EQ(table.code, kExitOk) << table.err;
  EXPECT_THAT(table.out, HasSubstr("legacy fwd f32"));
  EXPECT_THAT(table.out, HasSubstr("keys only in 9.14: 0"));
}

TEST_F(DiffTest, WithModelsEachModelsLayersAreAGroupOfTheirOwn) {
  // resnet18 at batch 2 and vgg16 at batch 3 (--model matches any batch):
  // no forward shape in common.
  ASSERT_EQ(Run({"prewarm", "--model", "resnet18", "--batch", "2", "--ops",
                 "fwd"})
                .code,
            kExitOk);
  ASSERT_EQ(Run({"prewarm", "--model", "vgg16", "--batch", "3", "--ops",
                 "fwd"})
                .code,
            kExitOk);
  int records = 0;
  const std::string old_version =
      ExportedAsCudnn914([](int, nlohmann::json&) {}, &records);
  ASSERT_EQ(Run({"import", WriteFile("old.jsonl", old_version)}).code,
            kExitOk);
  CliResult all = Run({"--json", "diff", "--from", "9.14", "--to", "9.19"});
  ASSERT_EQ(all.code, kExitOk) << all.err;
  ASSERT_EQ(all.Json()["groups"].size(), 1u);
  EXPECT_EQ(all.Json()["groups"][0]["keys"], records);

  CliResult per = Run({"--json", "diff", "--from", "9.14", "--to", "9.19",
                       "--model", "ResNet-18", "-m", "vgg16"});
  ASSERT_EQ(per.code, kExitOk) << per.err;
  const nlohmann::json j = per.Json();
  const nlohmann::json& groups = j["groups"];
  ASSERT_EQ(groups.size(), 2u) << per.out;
  EXPECT_EQ(groups[0]["group"], "resnet18 legacy fwd f32");
  EXPECT_EQ(groups[1]["group"], "vgg16 legacy fwd f32");
  EXPECT_GT(groups[0]["keys"].get<int>(), 3);
  EXPECT_GT(groups[1]["keys"].get<int>(), 3);
  EXPECT_EQ(groups[0]["keys"].get<int>() + groups[1]["keys"].get<int>(),
            records);

  // At another input size, none of resnet18's stored shapes is a layer.
  CliResult other = Run({"--json", "diff", "--from", "9.14", "--to", "9.19",
                         "--model", "resnet18", "--input", "160"});
  ASSERT_EQ(other.code, kExitOk) << other.err;
  EXPECT_EQ(other.Json()["groups"].size(), 0u);
}

TEST_F(DiffTest, AModelOrInputThatDoesNotBuildIsRefused) {
  CliResult r = Run({"diff", "--from", "9.14", "--to", "9.19", "--model",
                     "resnet-5000"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("--model"));
  r = Run({"diff", "--from", "9.14", "--to", "9.19", "--model", "resnet18",
           "--input", "12x"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("--input"));
}

TEST_F(DiffTest, AVersionThatCannotBeReadIsRefused) {
  for (const char* bad : {"9", "nine.14", "9.14.0.1", "9.100", "0.1"}) {
    CliResult r = Run({"diff", "--from", bad, "--to", "9.19"});
    EXPECT_EQ(r.code, kExitUsage) << bad;
    EXPECT_THAT(r.err, HasSubstr("cannot be read")) << bad;
  }
  EXPECT_EQ(ParseCudnnVersionFlag("9.19").value(), 91900);
  EXPECT_EQ(ParseCudnnVersionFlag("9.14.1").value(), 91401);
}

}  // namespace
}  // namespace tunedb::tuner
