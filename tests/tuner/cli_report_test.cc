// `tunedb report` against an in-process daemon on the simulated finder: a
// tuned model, served answers and a revalidation from a made-up older cuDNN
// version make a page with each section and the figures they should show.
// The daemon aggregates (the Report rpc): its aggregate is the one made here
// from the database file; a daemon older than that rpc (one that answers it
// UNIMPLEMENTED) has its records streamed and aggregated by the CLI, into
// the same page.
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/report_data.h"
#include "common/report_json.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "proto/convert.h"
#include "store/store.h"
#include "tests/tuner/cli_test_fixture.h"
#include "tunedb/v1/tunedb.grpc.pb.h"
#include "tuner/exit_codes.h"

namespace tunedb::tuner {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A daemon from before the Report rpc: Query and Stats passed on to a real
// daemon, every other rpc UNIMPLEMENTED (the generated service's default).
class OlderDaemon final : public v1::TuneDb::Service {
 public:
  OlderDaemon(const std::string& daemon, const std::string& socket)
      : stub_(v1::TuneDb::NewStub(grpc::CreateChannel(
            daemon, grpc::InsecureChannelCredentials()))),
        address_("unix:" + socket) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort(address_, grpc::InsecureServerCredentials());
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
  }
  ~OlderDaemon() override { server_->Shutdown(); }

  const std::string& address() const { return address_; }

  grpc::Status Query(grpc::ServerContext*, const v1::QueryRequest* request,
                     grpc::ServerWriter<v1::Record>* writer) override {
    grpc::ClientContext context;
    auto reader = stub_->Query(&context, *request);
    v1::Record record;
    while (reader->Read(&record)) {
      if (!writer->Write(record)) context.TryCancel();
    }
    return reader->Finish();
  }
  grpc::Status Stats(grpc::ServerContext*, const v1::StatsRequest* request,
                     v1::StatsResponse* response) override {
    grpc::ClientContext context;
    return stub_->Stats(&context, *request, response);
  }

 private:
  std::unique_ptr<v1::TuneDb::Stub> stub_;
  std::string address_;
  std::unique_ptr<grpc::Server> server_;
};

class ReportTest : public CliTest {
 protected:
  std::string ReadFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  // resnet18's forward passes under a made-up cuDNN 9.14.0, the first
  // one's leader made slow there, revalidated for the daemon's 9.19.0;
  // returns how many problems.
  int StoreARevalidatedModel() {
    EXPECT_EQ(Run({"prewarm", "-m", "resnet18", "--batch", "2", "--ops",
                   "fwd", "--no-progress"})
                  .code,
              kExitOk);
    int records = 0;
    const std::string old_version = ExportedAsCudnn914(
        [](int i, nlohmann::json& j) {
          if (i == 0) SlowFirstResult(j, 100);
        },
        &records);
    EXPECT_EQ(Run({"invalidate", "--all", "--yes"}).code, kExitOk);
    EXPECT_EQ(Run({"import", WriteFile("old.jsonl", old_version)}).code,
              kExitOk);
    CliResult revalidated =
        Run({"--json", "revalidate", "--from", "9.14", "--no-progress"});
    EXPECT_EQ(revalidated.code, kExitOk) << revalidated.err;
    return records;
  }

  // The sections of a page that come from the aggregate (not the ones that
  // tell of the daemon: its address, the time, its counters), in order.
  static std::string AggregateSections(const std::string& html) {
    std::string out;
    for (const char* id :
         {"devices", "heuristic", "saved", "revalidation", "workspaces"}) {
      const size_t start = html.find(absl::StrCat("<section id=", id));
      const size_t end = html.find("</section>", start);
      if (start == std::string::npos || end == std::string::npos) {
        ADD_FAILURE() << "no section " << id;
        continue;
      }
      out += html.substr(start, end - start);
    }
    return out;
  }
};

TEST_F(ReportTest, ShowsRecordsCoverageRevalidationAndWorkspaces) {
  const int records = StoreARevalidatedModel();
  const int64_t stored = StoredRecords();
  ASSERT_EQ(stored, 2 * records);

  const std::string out = dir_ + "/report.html";
  CliResult report = Run({"report", "-o", out, "-m", "resnet18", "--batch",
                          "2", "--ops", "fwd,bwd_data"});
  ASSERT_EQ(report.code, kExitOk) << report.err;
  EXPECT_THAT(report.err, HasSubstr("wrote " + out));
  const std::string html = ReadFile(out);
  for (const char* id : {"summary", "devices", "saved", "heuristic",
                         "predictions", "revalidation", "workspaces"}) {
    EXPECT_THAT(html, HasSubstr(std::string("<section id=") + id)) << id;
  }
  EXPECT_THAT(html, HasSubstr("<b>" + std::to_string(stored) +
                              "</b><span>records</span>"));
  EXPECT_THAT(html, HasSubstr("<td>9.14.0</td>"));
  EXPECT_THAT(html, HasSubstr("<td>9.19.0</td>"));
  // Each version stores every forward problem, none of the backward ones.
  EXPECT_THAT(html, HasSubstr(absl::StrCat(records, "/")));
  EXPECT_THAT(html, HasSubstr("<td>cuDNN 9.14.0</td><td>cuDNN 9.19.0</td>"));
  // The made-slow leader's choice changed back.
  EXPECT_THAT(html, HasSubstr("data-v=\"1\">1 ("));
  EXPECT_THAT(html, HasSubstr("data-figure=\"saved\""));
}

TEST_F(ReportTest, TheDaemonsAggregateIsTheDatabaseFilesAggregatedHere) {
  StoreARevalidatedModel();
  // A restart flushes the served counts: none change while both read.
  StartServer();
  // Planned: two stored problems and one nobody tuned.
  std::vector<ConvProblem> planned;
  ReportAggregator here;
  std::unique_ptr<Store> file;
  {
    Store::Options options;
    options.path = db_path_;
    options.read_only = true;
    absl::StatusOr<std::unique_ptr<Store>> opened = Store::Open(options);
    ASSERT_TRUE(opened.ok()) << opened.status();
    file = *std::move(opened);
  }
  ASSERT_TRUE(file->Query({}, 0, 2, [&](const Record& r) {
                    planned.push_back(r.key.problem);
                    return true;
                  }).ok());
  ASSERT_EQ(planned.size(), 2u);
  planned.push_back(planned[0]);
  planned.back().n = 999;
  here.SetPlannedProblems({}, planned);
  ASSERT_TRUE(file->Query({}, 0, 0, [&](const Record& r) {
                    here.Add(r);
                    return true;
                  }).ok());

  v1::ReportRequest request;
  for (const ConvProblem& p : planned) request.add_planned_problems(p.ToText());
  auto stub = v1::TuneDb::NewStub(grpc::CreateChannel(
      server_->address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  v1::ReportResponse response;
  const grpc::Status status = stub->Report(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ReportData expected = here.Finish();
  absl::StatusOr<std::vector<ServedDayProgram>> served =
      file->ServedDays(std::numeric_limits<int64_t>::min());
  ASSERT_TRUE(served.ok()) << served.status();
  SetServedDays(*served, &expected);
  EXPECT_EQ(response.report_json(), ReportDataToJson(expected));
  absl::StatusOr<ReportData> read = ReportDataFromJson(response.report_json());
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->records, StoredRecords());
  EXPECT_EQ(read->planned, 3);
  ASSERT_EQ(read->groups.size(), 2u);  // 9.14.0 and 9.19.0
  for (const DeviceGroup& g : read->groups) EXPECT_EQ(g.planned_stored, 2);
  EXPECT_EQ(ReportDataToJson(*read), response.report_json());
}

TEST_F(ReportTest, AnOlderDaemonsRecordsAreAggregatedHereIntoTheSamePage) {
  StoreARevalidatedModel();
  OlderDaemon older(server_->address(), dir_ + "/older.sock");
  const std::vector<std::string> args = {"-m", "resnet18", "--batch", "2",
                                         "--ops", "fwd,bwd_data"};
  std::vector<std::string> report = {"report", "-o", dir_ + "/new.html"};
  report.insert(report.end(), args.begin(), args.end());
  CliResult asked = Run(report);
  ASSERT_EQ(asked.code, kExitOk) << asked.err;
  EXPECT_THAT(asked.err, Not(HasSubstr("older")));

  std::vector<std::string> streamed = {"--address", older.address(),
                                       "--timeout", "20",
                                       "report",    "-o",
                                       dir_ + "/old.html"};
  streamed.insert(streamed.end(), args.begin(), args.end());
  CliResult fallback = RunRaw(streamed);
  ASSERT_EQ(fallback.code, kExitOk) << fallback.err;
  EXPECT_THAT(fallback.err,
              HasSubstr("tunedb: the daemon is older than the Report rpc: "
                        "reading its records one by one here (slower)\n"
                        "wrote "));
  EXPECT_EQ(AggregateSections(ReadFile(dir_ + "/old.html")),
            AggregateSections(ReadFile(dir_ + "/new.html")));
}

TEST_F(ReportTest, ThePageShowsTheTimeEachProgramSavedByWeek) {
  StoreARevalidatedModel();
  Record stored;
  {
    Store::Options options;
    options.path = db_path_;
    options.read_only = true;
    absl::StatusOr<std::unique_ptr<Store>> file = Store::Open(options);
    ASSERT_TRUE(file.ok()) << file.status();
    ASSERT_TRUE((*file)->Query({}, 0, 1, [&](const Record& r) {
                          stored = r;
                          return true;
                        }).ok());
  }
  auto stub = v1::TuneDb::NewStub(grpc::CreateChannel(
      server_->address(), grpc::InsecureChannelCredentials()));
  for (const char* program : {"nightly-train", "nightly-train", ""}) {
    v1::LookupRequest lookup;
    ToProto(stored.key.problem, lookup.mutable_problem());
    ToProto(stored.key.device, lookup.mutable_device());
    lookup.set_program(program);
    grpc::ClientContext context;
    v1::LookupResponse answer;
    ASSERT_TRUE(stub->Lookup(&context, lookup, &answer).ok());
  }
  StartServer();  // a restart flushes the served counts
  const std::string out = dir_ + "/weeks.html";
  CliResult report = Run({"report", "-o", out});
  ASSERT_EQ(report.code, kExitOk) << report.err;
  const std::string html = ReadFile(out);
  EXPECT_THAT(html, HasSubstr("<section id=weeks><h2>Time saved by week and "
                              "program</h2>"));
  EXPECT_THAT(html, HasSubstr("<td>nightly-train</td><td class=n "
                              "data-v=\"2\">2</td>"));
  EXPECT_THAT(html, HasSubstr("<td>(none named)</td><td class=n "
                              "data-v=\"1\">1</td>"));
  EXPECT_THAT(html, HasSubstr("the answers served each day"));
}

TEST_F(ReportTest, AnEmptyDatabaseStillMakesAPage) {
  const std::string out = dir_ + "/empty.html";
  CliResult report = Run({"report", "-o", out});
  ASSERT_EQ(report.code, kExitOk) << report.err;
  const std::string html = ReadFile(out);
  EXPECT_THAT(html, HasSubstr("<b>0</b><span>records</span>"));
  EXPECT_THAT(html, HasSubstr("No record was made by a revalidation."));
}

TEST_F(ReportTest, AFileThatCannotBeWrittenIsAnError) {
  CliResult report = Run({"report", "-o", dir_ + "/no/such/dir/r.html"});
  EXPECT_EQ(report.code, kExitError);
  EXPECT_THAT(report.err, HasSubstr("cannot write"));
}

}  // namespace
}  // namespace tunedb::tuner
