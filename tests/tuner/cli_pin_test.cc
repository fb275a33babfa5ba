// `tunedb pin make` and `tunedb pin show` against an in-process daemon.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/pin_file.h"
#include "tests/tuner/cli_test_fixture.h"
#include "tuner/exit_codes.h"

namespace tunedb::tuner {
namespace {

using ::testing::HasSubstr;

class PinCliTest : public CliTest {};

TEST_F(PinCliTest, PinMakePinsWhatAWarmRunWouldGetAndCountsWhatIsNotStored) {
  const std::vector<std::string> model = {"--model", "resnet18", "--batch",
                                          "2", "--ops", "fwd", "--api",
                                          "graph"};
  std::vector<std::string> prewarm = {"--json", "prewarm", "--limit", "3"};
  prewarm.insert(prewarm.end(), model.begin(), model.end());
  ASSERT_EQ(Run(prewarm).code, kExitOk);

  const std::string pin = dir_ + "/resnet18.pin";
  std::vector<std::string> make = {"--json", "pin", "make", "--no-progress",
                                   "-o", pin};
  make.insert(make.end(), model.begin(), model.end());
  CliResult made = Run(make);
  ASSERT_EQ(made.code, kExitOk) << made.err;
  const nlohmann::json j = made.Json();
  EXPECT_EQ(j["stored"], 3);
  EXPECT_GT(j["not_stored"].get<int>(), 0);
  EXPECT_GE(j["answers"].get<int>(), 3);  // one per filter that has one

  absl::StatusOr<PinFile> file = ReadPinFile(pin);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->made_by, "tunedb pin make");
  EXPECT_EQ(file->entries.size(), j["answers"].get<size_t>());
  for (const PinEntry& e : file->entries) {
    EXPECT_EQ(e.problem.api, ConvApi::kGraph);
    EXPECT_EQ(e.source, PinnedSource::kTuned);
  }

  CliResult shown = Run({"pin", "show", pin});
  ASSERT_EQ(shown.code, kExitOk) << shown.err;
  EXPECT_THAT(shown.out, HasSubstr("made by"));
  EXPECT_THAT(shown.out, HasSubstr("tunedb pin make"));
  EXPECT_THAT(shown.out, HasSubstr("det=1"));
  CliResult as_json = Run({"--json", "pin", "show", pin});
  ASSERT_EQ(as_json.code, kExitOk);
  EXPECT_EQ(as_json.Json()["format"], "tunedb-pin");
}

TEST_F(PinCliTest, PinShowRefusesAPinThatCannotBeRead) {
  const std::string pin = WriteFile("cut.pin", "{\"format\": \"tunedb-pin\",");
  CliResult r = Run({"pin", "show", pin});
  EXPECT_EQ(r.code, kExitPinRefused);
  EXPECT_THAT(r.err, HasSubstr("not a whole pin"));
  EXPECT_EQ(Run({"pin", "show", dir_ + "/none.pin"}).code, kExitPinRefused);
}

TEST_F(PinCliTest, PinCommandsHaveHelp) {
  for (const char* sub : {"make", "show"}) {
    CliResult r = Run({"pin", sub, "--help"});
    EXPECT_EQ(r.code, kExitOk) << sub;
    EXPECT_THAT(r.out, HasSubstr("pin")) << sub;
  }
}

}  // namespace
}  // namespace tunedb::tuner
