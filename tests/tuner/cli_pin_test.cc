// `tunedb pin make`, `tunedb pin show` and `tunedb pin seal` against an
// in-process daemon.
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/pin_file.h"
#include "tests/testing/test_values.h"
#include "tests/tuner/cli_test_fixture.h"
#include "tuner/exit_codes.h"

namespace tunedb::tuner {
namespace {

using ::testing::HasSubstr;

class PinCliTest : public CliTest {};

std::string ReadFileText(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

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
  for (const char* sub : {"make", "show", "seal"}) {
    CliResult r = Run({"pin", sub, "--help"});
    EXPECT_EQ(r.code, kExitOk) << sub;
    EXPECT_THAT(r.out, HasSubstr("pin")) << sub;
  }
}

// A pin of the daemon's device with one legacy answer, written as a
// recording run writes it.
std::string APin(const std::string& path) {
  PinFile pin;
  pin.device = testing_util::TestDevice();
  pin.made_by = "tunedb run";
  PinEntry e;
  e.problem = testing_util::TestProblem(8);
  e.source = PinnedSource::kTuned;
  e.answer.algo = 7;
  e.answer.math_type = MathType::kTensorOp;
  pin.entries.push_back(e);
  EXPECT_TRUE(MergePinFile(path, pin).ok());
  return path;
}

TEST_F(PinCliTest, AnEditedPinIsRefusedNamingTheEditUntilSealed) {
  const std::string pin = APin(dir_ + "/job.pin");
  std::string text = ReadFileText(pin);
  const size_t at = text.find("\"algo\":7");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 8, "\"algo\":3");
  WriteFile("job.pin", text);
  CliResult refused = Run({"pin", "show", pin});
  EXPECT_EQ(refused.code, kExitPinRefused);
  EXPECT_THAT(refused.err, HasSubstr("was edited after it was recorded"));
  EXPECT_THAT(refused.err, HasSubstr("algo 3"));

  CliResult sealed = Run({"pin", "seal", pin});
  ASSERT_EQ(sealed.code, kExitOk) << sealed.err;
  EXPECT_THAT(sealed.out, HasSubstr("sealed anew"));
  EXPECT_THAT(sealed.out, HasSubstr("algo 3"));
  CliResult shown = Run({"--json", "pin", "show", pin});
  ASSERT_EQ(shown.code, kExitOk) << shown.err;
  EXPECT_EQ(shown.Json()["answers"][0]["algo"], 3);
  EXPECT_THAT(Run({"pin", "seal", pin}).out, HasSubstr("sealed already"));
}

TEST_F(PinCliTest, APinOfBeforeDigestsIsShownWithAWarning) {
  const std::string pin = APin(dir_ + "/old.pin");
  std::string text = ReadFileText(pin);
  const size_t at = text.find(",\"digest\":\"");
  ASSERT_NE(at, std::string::npos);
  text.erase(at, text.find('"', at + 11) + 1 - at);
  WriteFile("old.pin", text);
  CliResult shown = Run({"pin", "show", pin});
  ASSERT_EQ(shown.code, kExitOk) << shown.err;
  EXPECT_THAT(shown.err, HasSubstr("written before pins carried digests"));
  EXPECT_THAT(shown.err, HasSubstr("tunedb pin seal " + pin));
}

TEST_F(PinCliTest, APinThatIsAFifoOrAFolderIsRefusedAtOnceSayingWhatItIs) {
  const std::string fifo = dir_ + "/fifo.pin";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  CliResult r = Run({"pin", "show", fifo});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_EQ(r.code, kExitPinRefused);
  EXPECT_THAT(r.err, HasSubstr("is a FIFO"));
  r = Run({"pin", "show", dir_});
  EXPECT_EQ(r.code, kExitPinRefused);
  EXPECT_THAT(r.err, HasSubstr("is a directory"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("not JSON")));
  r = Run({"pin", "seal", fifo});
  EXPECT_EQ(r.code, kExitPinRefused);
  EXPECT_THAT(r.err, HasSubstr("is a FIFO"));
}

TEST_F(PinCliTest, APinThatCannotBeWrittenHasItsOwnExitCodeNotUnreachable) {
  const std::vector<std::string> model = {"--model", "resnet18", "--batch",
                                          "2", "--ops", "fwd"};
  ASSERT_EQ(Run({"prewarm", "--model", "resnet18", "--batch", "2", "--ops",
                 "fwd", "--limit", "1"})
                .code,
            kExitOk);
  for (const std::string& out :
       {std::string("/dev/full"), dir_ + "/no/such/folder.pin", dir_}) {
    std::vector<std::string> make = {"pin", "make", "--no-progress", "-o",
                                     out};
    make.insert(make.end(), model.begin(), model.end());
    const auto start = std::chrono::steady_clock::now();
    CliResult r = Run(make);
    EXPECT_LT(std::chrono::steady_clock::now() - start,
              std::chrono::seconds(5))
        << out;
    EXPECT_EQ(r.code, kExitNotWritten) << out << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("was not written")) << out;
  }
  struct stat st;
  ASSERT_EQ(stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/full was replaced";
}

}  // namespace
}  // namespace tunedb::tuner
