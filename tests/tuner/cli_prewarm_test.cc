// `tunedb prewarm` against an in-process daemon: models and shape files,
// skipping stored problems, resuming after a limit or an interrupt, partial
// failures, bad shape files.
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tuner/cli_test_fixture.h"
#include "tuner/exit_codes.h"
#include "tuner/interrupt.h"

namespace tunedb::tuner {
namespace {

using ::testing::HasSubstr;

class PrewarmTest : public CliTest {};

TEST_F(PrewarmTest, ModelThenRerunSkipsEverything) {
  CliResult first = Run({"--json", "prewarm", "--model", "resnet18", "--batch",
                         "2", "--ops", "fwd"});
  ASSERT_EQ(first.code, kExitOk) << first.err;
  nlohmann::json s = first.Json();
  // ResNet-18 has 20 convs; some repeat (e.g. layer1.0.conv1 = layer1.1.conv2).
  const int64_t shapes = s["shapes"];
  EXPECT_GT(shapes, 5);
  EXPECT_LE(shapes, 20);
  EXPECT_EQ(s["searched"], shapes);
  EXPECT_EQ(s["already_stored"], 0);
  EXPECT_EQ(s["failed"], 0);
  EXPECT_EQ(StoredRecords(), shapes);
  EXPECT_GT(s["search_ms_saved_per_process"].get<double>(), 0);

  CliResult second = Run({"--json", "prewarm", "--model", "resnet18", "--batch",
                          "2", "--ops", "fwd"});
  ASSERT_EQ(second.code, kExitOk) << second.err;
  EXPECT_EQ(second.Json()["searched"], 0);
  EXPECT_EQ(second.Json()["already_stored"], shapes);
  // The same records, summed in another order.
  EXPECT_NEAR(second.Json()["search_ms_saved_per_process"].get<double>(),
              s["search_ms_saved_per_process"].get<double>(), 1e-9);
  EXPECT_EQ(SearchesRun(), shapes);

  // --force searches again.
  CliResult forced = Run({"--json", "prewarm", "--model", "resnet18", "--batch",
                          "2", "--ops", "fwd", "--force"});
  ASSERT_EQ(forced.code, kExitOk) << forced.err;
  EXPECT_EQ(forced.Json()["searched"], shapes);
}

TEST_F(PrewarmTest, GraphApiStoresEngineConfigsThatQueryAndShowDisplay) {
  CliResult prewarm =
      Run({"--json", "prewarm", "--model", "resnet18", "--batch", "2", "--ops",
           "fwd", "--api", "graph"});
  ASSERT_EQ(prewarm.code, kExitOk) << prewarm.err;
  const int64_t shapes = prewarm.Json()["searched"];
  EXPECT_GT(shapes, 5);
  // The legacy records of the same convolutions are others.
  CliResult legacy = Run({"--json", "prewarm", "--model", "resnet18",
                          "--batch", "2", "--ops", "fwd"});
  ASSERT_EQ(legacy.code, kExitOk) << legacy.err;
  EXPECT_EQ(legacy.Json()["searched"], shapes);

  CliResult graph = Run({"--json", "query", "--filter", "api=graph"});
  ASSERT_EQ(graph.code, kExitOk) << graph.err;
  ASSERT_EQ(graph.Json().size(), static_cast<size_t>(shapes));
  const nlohmann::json record = graph.Json()[0];
  EXPECT_EQ(record["problem"]["api"], "graph");
  EXPECT_EQ(record["problem"]["align"], 16);
  EXPECT_EQ(record["results"][0]["engine"]["knobs"].get<std::string>().rfind(
                "3=", 0),
            0u);
  EXPECT_GT(record["results"][0]["engine"]["plan_bytes"].get<int64_t>(), 0);
  EXPECT_EQ(Run({"--json", "query", "--filter", "api=legacy"}).Json().size(),
            static_cast<size_t>(shapes));

  CliResult show = Run({"show", record["key"].get<std::string>()});
  ASSERT_EQ(show.code, kExitOk) << show.err;
  EXPECT_THAT(show.out, HasSubstr("engine's global index"));
  EXPECT_THAT(show.out, HasSubstr("knobs"));
  EXPECT_THAT(show.out, HasSubstr("3="));

  CliResult bad = Run({"prewarm", "--model", "resnet18", "--batch", "2",
                       "--ops", "fwd", "--api", "graph", "--align", "2"});
  EXPECT_EQ(bad.code, kExitUsage) << bad.err;
  EXPECT_THAT(bad.err, HasSubstr("--align"));
}

TEST_F(PrewarmTest, HumanSummaryTable) {
  CliResult r = Run({"prewarm", "--model", "vgg16", "--batch", "1", "--ops",
                     "fwd", "--input", "32"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("prewarm summary"));
  EXPECT_THAT(r.out, HasSubstr("searches run"));
  EXPECT_THAT(r.out, HasSubstr("search time saved per later process"));
  EXPECT_THAT(r.err, HasSubstr("unique problems"));
  // Not a terminal: the progress ends with a plain line, no carriage return.
  EXPECT_THAT(r.err, HasSubstr("tuning "));
  EXPECT_EQ(r.err.find('\r'), std::string::npos);
}

TEST_F(PrewarmTest, LimitThenResume) {
  const std::vector<std::string> args = {"--json",   "prewarm", "--model",
                                         "resnet18", "--batch", "4"};
  std::vector<std::string> limited = args;
  limited.insert(limited.end(), {"--limit", "7"});
  CliResult first = Run(limited);
  ASSERT_EQ(first.code, kExitOk) << first.err;
  const int64_t total = first.Json()["shapes"];
  EXPECT_EQ(first.Json()["searched"], 7);
  EXPECT_EQ(first.Json()["not_sent"], total - 7);
  EXPECT_EQ(StoredRecords(), 7);

  CliResult second = Run(args);
  ASSERT_EQ(second.code, kExitOk) << second.err;
  EXPECT_EQ(second.Json()["already_stored"], 7);
  EXPECT_EQ(second.Json()["searched"], total - 7);
  EXPECT_EQ(SearchesRun(), total);
}

TEST_F(PrewarmTest, InterruptedRunResumesWithoutRedoingWork) {
  StartServer("slow_ms=20");
  const std::vector<std::string> args = {"--json",   "prewarm", "--model",
                                         "resnet50", "--batch", "2",
                                         "--window", "2"};
  CliResult first;
  std::thread run([&] { first = Run(args); });
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while (SearchesRun() < 5 && absl::Now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  RequestInterrupt();
  run.join();
  ClearInterrupt();
  ASSERT_EQ(first.code, kExitInterrupted) << first.err;
  nlohmann::json s = first.Json();
  EXPECT_TRUE(s["interrupted"].get<bool>());
  const int64_t total = s["shapes"];
  const int64_t done = s["searched"];
  EXPECT_GE(done, 5);
  EXPECT_LT(done, total);
  EXPECT_EQ(s["unanswered"], 0);  // the in-flight answers were collected
  EXPECT_EQ(s["not_sent"].get<int64_t>() + done, total);
  EXPECT_THAT(first.err, HasSubstr("rerun"));
  const int64_t stored = StoredRecords();
  EXPECT_EQ(stored, done);

  CliResult second = Run(args);
  ASSERT_EQ(second.code, kExitOk) << second.err;
  EXPECT_EQ(second.Json()["already_stored"], stored);
  EXPECT_EQ(second.Json()["searched"], total - stored);
  EXPECT_EQ(StoredRecords(), total);
}

TEST_F(PrewarmTest, ShapeFilesAllFormatsAndDedup) {
  const std::string jsonl = WriteFile(
      "a.jsonl",
      "{\"c\": 16, \"k\": 32, \"in\": [28, 28], \"filt\": 3, \"pad\": 1}\n"
      "{\"c\": 16, \"k\": 32, \"in\": [28, 28], \"filt\": 3, \"pad\": 1}\n");
  const std::string csv = WriteFile("b.csv",
                                    "c,k,in,filt,stride,ops\n"
                                    "16,32,28x28,3,2,fwd\n");
  CliResult r = Run({"--json", "prewarm", "--file", jsonl, "--file", csv,
                     "--batch", "8", "--ops", "fwd,bwd_filter"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  // jsonl: 2 identical lines x 2 ops -> 2 unique; csv: 1 line x 1 op.
  EXPECT_EQ(r.Json()["shapes"], 3);
  EXPECT_EQ(r.Json()["duplicates_dropped"], 2);
  EXPECT_EQ(r.Json()["searched"], 3);

  // Key text from stdin: reuse a stored key (a hit) and a new problem.
  CliResult q = Run({"--json", "query", "--limit", "1"});
  ASSERT_EQ(q.code, kExitOk);
  const std::string key = q.Json()[0]["key"];
  const std::string problem =
      "op=fwd n=1 c=4 k=4 in=8x8 filt=1x1 pad=0x0 stride=1x1 dil=1x1 "
      "groups=1 mode=xcorr in_type=f32 out_type=f32 compute=f32 layout=nchw "
      "tc=1 tf32=1";
  // Key text takes nothing from --batch: a list of two changes nothing.
  CliResult t = Run({"--json", "prewarm", "--file", "-", "--batch", "1,2"},
                    key + "\n# comment\n" + problem + "\n");
  ASSERT_EQ(t.code, kExitOk) << t.err;
  EXPECT_EQ(t.Json()["shapes"], 2);
  EXPECT_EQ(t.Json()["duplicates_dropped"], 0);
  EXPECT_EQ(t.Json()["already_stored"], 1);
  EXPECT_EQ(t.Json()["searched"], 1);
}

TEST_F(PrewarmTest, BadShapeFileTunesNothing) {
  const std::string path = WriteFile("bad.csv",
                                     "c,k,in,filt\n"
                                     "16,32,28x28,3\n"
                                     "16,32,28x28,0\n"
                                     "16,x,28x28,3\n");
  CliResult r = Run({"prewarm", "--file", path});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("bad.csv:3: field 'filt'"));
  EXPECT_THAT(r.err, HasSubstr("bad.csv:4: field 'k'"));
  EXPECT_EQ(SearchesRun(), 0);
  EXPECT_EQ(StoredRecords(), 0);
}

TEST_F(PrewarmTest, PartialFailure) {
  StartServer("fail_n=13");
  const std::string path =
      WriteFile("f.jsonl",
                "{\"n\": 13, \"c\": 8, \"k\": 8, \"in\": 8, \"filt\": 3}\n"
                "{\"n\": 12, \"c\": 8, \"k\": 8, \"in\": 8, \"filt\": 3}\n");
  CliResult r = Run({"--json", "prewarm", "--file", path, "--ops", "fwd"});
  EXPECT_EQ(r.code, kExitPartial) << r.err;
  EXPECT_EQ(r.Json()["failed"], 1);
  EXPECT_EQ(r.Json()["searched"], 1);
  ASSERT_EQ(r.Json()["failures"].size(), 1u);
  EXPECT_EQ(r.Json()["failures"][0]["source"], path + ":1");
  EXPECT_EQ(StoredRecords(), 1);
}

TEST_F(PrewarmTest, DryRunNeedsNoDaemon) {
  CliResult r = RunRaw({"--address", "unix:/nonexistent/sock", "prewarm",
                        "--dry-run", "--model", "mobilenetv2", "--ops", "fwd",
                        "--dtype", "fp16", "--layout", "nhwc"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("mobilenetv2/features.0 fwd"));
  EXPECT_THAT(r.out, HasSubstr("g96"));  // a depthwise layer
  EXPECT_THAT(r.out, HasSubstr("nhwc"));
  EXPECT_THAT(r.out, HasSubstr("unique problems"));
}

TEST_F(PrewarmTest, UsageErrors) {
  EXPECT_EQ(Run({"prewarm"}).code, kExitUsage);
  CliResult unknown = Run({"prewarm", "--model", "alexnet"});
  EXPECT_EQ(unknown.code, kExitUsage);
  EXPECT_THAT(unknown.err, HasSubstr("resnet50"));
  EXPECT_EQ(Run({"prewarm", "--model", "unet", "--input", "500"}).code,
            kExitUsage);
  EXPECT_EQ(Run({"prewarm", "--model", "resnet18", "--dtype", "int8"}).code,
            kExitUsage);
}

TEST_F(PrewarmTest, EveryModelTunesOnTheDaemon) {
  for (const char* model :
       {"resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "vgg16",
        "mobilenetv2", "efficientnetb0", "unet", "unetsame", "unet3d",
        "r3d18"}) {
    CliResult r = Run({"--json", "prewarm", "--model", model, "--batch", "1",
                       "--ops", "fwd", "--no-progress"});
    ASSERT_EQ(r.code, kExitOk) << model << ": " << r.err;
    EXPECT_EQ(r.Json()["failed"], 0) << model;
    EXPECT_EQ(r.Json()["searched"].get<int64_t>() +
                  r.Json()["already_stored"].get<int64_t>(),
              r.Json()["shapes"].get<int64_t>())
        << model;
  }
}

TEST_F(PrewarmTest, SpreadsOverGpusOfTheSameKind) {
  StartServer("devices=2;slow_ms=5");
  CliResult r = Run({"--json", "prewarm", "--model", "resnet18", "--batch", "2",
                     "--ops", "fwd"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.err, HasSubstr("(2 GPUs)"));
  EXPECT_EQ(r.Json()["searched"], r.Json()["shapes"]);
  CliResult one = Run({"--json", "prewarm", "--model", "resnet18", "--batch",
                       "2", "--ops", "fwd", "--gpu", "1"});
  ASSERT_EQ(one.code, kExitOk) << one.err;
  EXPECT_EQ(one.Json()["already_stored"], r.Json()["shapes"]);
}

TEST_F(PrewarmTest, BacksOffWhenTheDaemonQueueIsFull) {
  StartServer("slow_ms=10", /*queue_capacity=*/1);
  CliResult r = Run({"--json", "prewarm", "--model", "resnet18", "--batch", "2",
                     "--ops", "fwd", "--window", "8"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.Json()["failed"], 0);
  EXPECT_EQ(r.Json()["searched"], r.Json()["shapes"]);
  EXPECT_GT(server_->core().Stats().rejected, 0);  // it did push back
}

TEST_F(PrewarmTest, ModelsCommand) {
  CliResult r = Run({"--json", "models"});
  ASSERT_EQ(r.code, kExitOk);
  bool found = false;
  for (const auto& m : r.Json()) {
    if (m["name"] == "resnet50") {
      found = true;
      EXPECT_EQ(m["convs"], 53);
      EXPECT_EQ(m["output"], "2048x7x7");
    }
  }
  EXPECT_TRUE(found);
  CliResult csv = Run({"models", "--csv"});
  EXPECT_THAT(csv.out, HasSubstr("\nresnet50,224x224,53,0,0,2048x7x7,"));
  CliResult table = Run({"models"});
  EXPECT_THAT(table.out, HasSubstr("mobilenetv2"));
  EXPECT_THAT(table.out, HasSubstr("unet3d"));
}

}  // namespace
}  // namespace tunedb::tuner
