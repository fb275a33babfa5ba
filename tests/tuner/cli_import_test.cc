// `tunedb import` against an in-process daemon: a file over the limits is
// refused before a line is sent (even with no daemon to send to), standard
// input is streamed rather than held in memory, and the progress shows the
// daemon's commit as a phase of its own.
#include <malloc.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <istream>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/wire_limits.h"
#include "store/record_json.h"
#include "tests/testing/test_values.h"
#include "tests/tuner/cli_test_fixture.h"
#include "tuner/cli.h"
#include "tuner/exit_codes.h"
#include "tunedb/v1/tunedb.grpc.pb.h"

namespace tunedb::tuner {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Resident memory of this process, bytes.
int64_t ResidentBytes() {
  std::ifstream status("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  status >> pages >> resident;
  return resident * 4096;
}

// Standard input of `count` export lines, made as they are read; notes the
// process's resident memory when the reader reaches their end.
class GeneratedLines : public std::streambuf {
 public:
  explicit GeneratedLines(int count) : count_(count) {}
  int64_t resident_at_end() const { return resident_at_end_; }

 protected:
  int_type underflow() override {
    if (next_ > count_) {
      if (resident_at_end_ == 0) resident_at_end_ = ResidentBytes();
      return traits_type::eof();
    }
    line_ = RecordToJson(testing_util::TestRecord(next_++)) + "\n";
    setg(line_.data(), line_.data(), line_.data() + line_.size());
    return traits_type::to_int_type(line_[0]);
  }

 private:
  const int count_;
  int next_ = 1;
  std::string line_;
  int64_t resident_at_end_ = 0;
};

class ImportTest : public CliTest {
 protected:
  // A file of records 1..count as export writes them.
  std::string WriteRecords(const std::string& name, int count) {
    std::string text;
    for (int n = 1; n <= count; ++n) {
      absl::StrAppend(&text, RecordToJson(testing_util::TestRecord(n)), "\n");
    }
    return WriteFile(name, text);
  }

  // Runs with the daemon stopped, at the address it had.
  CliResult RunWithoutDaemon(const std::vector<std::string>& args) {
    const std::string address = server_->address();
    StopServer();
    std::vector<std::string> full = {"--address", address, "--timeout", "2"};
    full.insert(full.end(), args.begin(), args.end());
    return RunRaw(full);
  }
};

TEST_F(ImportTest, AFileOverTheLineLimitIsRefusedBeforeALineIsSent) {
  std::string text;
  text.reserve(3 * (kMaxImportLines + 1));
  for (int64_t i = 0; i <= kMaxImportLines; ++i) text += "{}\n";
  const std::string path = WriteFile("big.jsonl", text);
  // No daemon: the file is refused before the CLI connects.
  CliResult r = RunWithoutDaemon({"import", path});
  EXPECT_EQ(r.code, kExitBadInput) << r.err;
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat(path, " has ", kMaxImportLines + 1,
                                            " lines")));
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat("at most ", kMaxImportLines)));
  EXPECT_THAT(r.err, HasSubstr("nothing was imported"));
}

TEST_F(ImportTest, ALineOverTheMessageLimitIsRefusedBeforeALineIsSent) {
  const std::string good = RecordToJson(testing_util::TestRecord(1));
  const std::string path = WriteFile(
      "long.jsonl",
      absl::StrCat(good, "\n\n", std::string(kMaxImportLineBytes + 1, 'x'),
                   "\n", good, "\n"));
  CliResult r = RunWithoutDaemon({"import", path});
  EXPECT_EQ(r.code, kExitBadInput) << r.err;
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat(
                         path, ":3 is ", kMaxImportLineBytes + 1, " bytes")));
}

TEST_F(ImportTest, TheProgressShowsTheCommitAfterTheLastLineIsSent) {
  const std::string path = WriteRecords("records.jsonl", 1200);
  CliResult r = Run({"import", path});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.err, HasSubstr("sending 1200/1200 (100%)"));
  // The wait for the daemon's commit is its own line, after the last line.
  const size_t sent = r.err.find("sending 1200/1200");
  const size_t committing = r.err.find("committing 1200 records...");
  ASSERT_NE(committing, std::string::npos) << r.err;
  EXPECT_GT(committing, sent);
  EXPECT_THAT(r.out, HasSubstr("imported 1200 record(s)"));
  EXPECT_EQ(StoredRecords(), 1200);
}

TEST_F(ImportTest, StandardInputIsStreamedNotHeldInMemory) {
  constexpr int kLines = 60000;  // about 70 MiB of JSON lines
  malloc_trim(0);
  const int64_t before = ResidentBytes();
  GeneratedLines lines(kLines);
  std::istream in(&lines);
  std::ostringstream out, err;
  CliIo io;
  io.in = &in;
  io.out = &out;
  io.err = &err;
  const int code = RunCli(
      {"--address", server_->address(), "--timeout", "60", "import", "-"}, io);
  ASSERT_EQ(code, kExitOk) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("imported 60000 record(s) from <stdin>"));
  EXPECT_EQ(StoredRecords(), kLines);
  // Holding the lines would take over 70 MiB by the time the last one is
  // read; streaming them takes a staging batch or two.
  ASSERT_GT(lines.resident_at_end(), 0);
  EXPECT_LT(lines.resident_at_end() - before, int64_t{32} << 20);
}

TEST_F(ImportTest, RejectsNameTheirLineInTheFileAndCountThemAll) {
  std::string text;
  for (int n = 1; n <= 5; ++n) {
    absl::StrAppend(&text, "\n", RecordToJson(testing_util::TestRecord(n)),
                    "\n{\"broken\": 1}\n");
  }
  const std::string path = WriteFile("bad.jsonl", text);
  CliResult r = Run({"--json", "import", path});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.Json()["rejected"], 5);
  ASSERT_EQ(r.Json()["rejects"].size(), 5u);
  EXPECT_EQ(r.Json()["rejects"][0]["line"], 3);
  EXPECT_EQ(r.Json()["rejects"][4]["line"], 15);
  EXPECT_EQ(StoredRecords(), 0);
}

// A line that is not UTF-8 is a bad line like any other: named by its line
// in the file, nothing imported, and no protobuf complaint on the way.
TEST_F(ImportTest, ALineThatIsNotUtf8IsRejectedByItsLineInTheFile) {
  std::string text;
  for (int n = 1; n <= 4; ++n) {
    std::string line = RecordToJson(testing_util::TestRecord(n));
    if (n == 3) line.insert(5, "\xc3\x28");
    absl::StrAppend(&text, line, "\n");
  }
  const std::string path = WriteFile("not_utf8.jsonl", text);
  testing::internal::CaptureStderr();
  CliResult r = Run({"import", path});
  const std::string process_stderr = testing::internal::GetCapturedStderr();
  EXPECT_EQ(r.code, kExitBadInput) << r.err;
  EXPECT_THAT(r.err, HasSubstr(path + ":3: not valid UTF-8 (byte 6)"));
  EXPECT_THAT(r.err, HasSubstr("nothing was imported"));
  EXPECT_THAT(process_stderr, Not(HasSubstr("libprotobuf")));
  EXPECT_EQ(StoredRecords(), 0);
}

TEST_F(ImportTest, StatusSaysWhetherTheImportOfAGivenNameCommitted) {
  auto channel = grpc::CreateChannel(server_->address(),
                                     grpc::InsecureChannelCredentials());
  auto stub = v1::TuneDb::NewStub(channel);
  grpc::ClientContext ctx;
  v1::ImportResponse response;
  auto writer = stub->Import(&ctx, &response);
  for (int n = 1; n <= 2; ++n) {
    v1::ImportLine line;
    line.set_json(RecordToJson(testing_util::TestRecord(n)));
    if (n == 1) line.set_import_id("import-0123abcd");
    ASSERT_TRUE(writer->Write(line));
  }
  writer->WritesDone();
  ASSERT_TRUE(writer->Finish().ok());

  CliResult committed = Run({"import", "--status", "import-0123abcd"});
  EXPECT_EQ(committed.code, kExitOk) << committed.err;
  EXPECT_THAT(committed.out,
              HasSubstr("import-0123abcd committed: 2 record(s) from 2 "
                        "line(s)"));
  CliResult unknown = Run({"--json", "import", "--status", "import-none"});
  EXPECT_EQ(unknown.code, kExitNotFound);
  EXPECT_EQ(unknown.Json()["committed"], false);
  CliResult neither = Run({"import"});
  EXPECT_EQ(neither.code, kExitUsage);
}

TEST_F(ImportTest, AnImportPastTheDaemonsLimitSaysSoNotThatTheStreamBroke) {
  // Four imports held open: the daemon's limit (docs/cli.md). Each waits
  // for the daemon's initial metadata, which it sends once the import has
  // begun, so the fifth comes when all four hold their places.
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<v1::ImportResponse> responses(4);
  std::vector<std::unique_ptr<grpc::ClientWriter<v1::ImportLine>>> writers;
  std::vector<std::unique_ptr<v1::TuneDb::Stub>> stubs;
  // Why a held import is not holding its place, should one not be.
  auto held_status = [&]() {
    std::string text;
    for (size_t i = 0; i < writers.size(); ++i) {
      contexts[i]->TryCancel();  // CANCELLED only if it was still open
      const grpc::Status s = writers[i]->Finish();
      absl::StrAppend(&text, "\nheld import ", i, ": ", s.error_code(), " ",
                      s.error_message());
    }
    return text;
  };
  for (int i = 0; i < 4; ++i) {
    grpc::ChannelArguments args;
    args.SetInt("tunedb.test.channel", i);  // not shared with the others
    stubs.push_back(v1::TuneDb::NewStub(grpc::CreateCustomChannel(
        server_->address(), grpc::InsecureChannelCredentials(), args)));
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    contexts.back()->set_deadline(std::chrono::system_clock::now() +
                                  std::chrono::seconds(60));
    writers.push_back(
        stubs.back()->Import(contexts.back().get(), &responses[i]));
    v1::ImportLine line;
    line.set_json(RecordToJson(testing_util::TestRecord(i + 1)));
    line.set_expected_lines(2);
    ASSERT_TRUE(writers.back()->Write(line)) << held_status();
    writers.back()->WaitForInitialMetadata();
  }
  const std::string path = WriteFile(
      "one.jsonl", RecordToJson(testing_util::TestRecord(9)) + "\n");
  CliResult r = Run({"import", path});
  EXPECT_EQ(r.code, kExitError) << r.err << held_status();
  EXPECT_THAT(r.err, HasSubstr("4 imports are running already"));
  EXPECT_THAT(r.err, HasSubstr("limit of imports at once"));
  EXPECT_THAT(r.err, Not(HasSubstr("stream broke")));
  EXPECT_THAT(r.err, HasSubstr("nothing was imported"));
  if (r.code != kExitError) return;  // held_status() has finished them
  for (auto& c : contexts) c->TryCancel();
  for (auto& w : writers) w->Finish().IgnoreError();
}

}  // namespace
}  // namespace tunedb::tuner
