// The Report rpc through a real gRPC channel on a Unix socket, against an
// in-process daemon on a database file: the aggregate of the records a
// filter selects, its input refused naming the field, its bound, its
// cancellation, the store written while a report walks it, and the
// answers served by day and program that a flushed daemon reports.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/report_data.h"
#include "common/report_json.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/convert.h"
#include "proto/grpc_status.h"
#include "server/service/server.h"
#include "server/service/store_report.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_values.h"
#include "tunedb/v1/tunedb.grpc.pb.h"

namespace tunedb {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing_util::TestRecord;

class ReportRpcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Start("tunedb.sock");
    for (int64_t n = 1; n <= 4; ++n) {
      ASSERT_TRUE(store().Put(TestRecord(n)).ok());
    }
  }
  void TearDown() override { server_->Shutdown(absl::Seconds(5)); }

  // A daemon on the test's database, listening on `socket`.
  void Start(const std::string& socket) {
    ServerOptions options;
    options.unix_socket = dir_.File(socket);
    options.store.path = dir_.File("tunedb.db");
    options.finder = "simulated";
    auto server = Server::BuildAndStart(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    stub_ = v1::TuneDb::NewStub(grpc::CreateChannel(
        server_->address(), grpc::InsecureChannelCredentials()));
  }

  // A Lookup of TestRecord(n)'s key naming `program` ("": none).
  grpc::Status LookupAs(int64_t n, const std::string& program) {
    v1::LookupRequest lookup;
    ToProto(TestRecord(n).key.problem, lookup.mutable_problem());
    ToProto(TestRecord(n).key.device, lookup.mutable_device());
    lookup.set_program(program);
    grpc::ClientContext context;
    v1::LookupResponse answer;
    return stub_->Lookup(&context, lookup, &answer);
  }

  Store& store() { return server_->core().store(); }

  grpc::Status Report(const v1::ReportRequest& request,
                      v1::ReportResponse* response) {
    grpc::ClientContext context;
    return stub_->Report(&context, request, response);
  }

  // The status of the Report of `request`.
  grpc::Status Refused(const v1::ReportRequest& request) {
    v1::ReportResponse response;
    return Report(request, &response);
  }

  testing_util::TempDir dir_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<v1::TuneDb::Stub> stub_;
};

TEST_F(ReportRpcTest, AnswersTheAggregateOfTheRecordsTheFilterSelects) {
  v1::ReportRequest request;
  v1::ReportResponse response;
  ASSERT_TRUE(Report(request, &response).ok());
  absl::StatusOr<ReportData> all = ReportDataFromJson(response.report_json());
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->records, 4);
  ASSERT_EQ(all->groups.size(), 1u);
  EXPECT_EQ(all->groups[0].gpu_model, testing_util::kTestGpu);

  (*request.mutable_filter()->mutable_fields())["n"] = "2";
  request.add_planned_problems(TestRecord(2).key.problem.ToText());
  request.add_planned_problems(TestRecord(9).key.problem.ToText());
  ASSERT_TRUE(Report(request, &response).ok());
  absl::StatusOr<ReportData> one = ReportDataFromJson(response.report_json());
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->records, 1);
  EXPECT_EQ(one->planned, 2);
  EXPECT_EQ(one->groups[0].planned_stored, 1);
}

TEST_F(ReportRpcTest, AFlushedDaemonReportsEachProgramsAnswersAndTimeSaved) {
  ASSERT_TRUE(LookupAs(1, "train").ok());
  ASSERT_TRUE(LookupAs(1, "train").ok());
  ASSERT_TRUE(LookupAs(2, "train").ok());
  ASSERT_TRUE(LookupAs(3, "eval").ok());
  ASSERT_TRUE(LookupAs(4, "").ok());
  // The served counts are flushed as the daemon stops; the next daemon on
  // the file reports them.
  server_->Shutdown(absl::Seconds(5));
  Start("second.sock");
  v1::ReportResponse response;
  ASSERT_TRUE(Report(v1::ReportRequest(), &response).ok());
  absl::StatusOr<ReportData> data = ReportDataFromJson(response.report_json());
  ASSERT_TRUE(data.ok()) << data.status();
  const double search_ms = TestRecord(1).search_ms;
  EXPECT_EQ(data->served, 5);
  ASSERT_EQ(data->served_days.size(), 1u);
  EXPECT_EQ(data->served_days[0].served, 5);
  EXPECT_EQ(data->served_days[0].saved_ms, 5 * search_ms);
  ASSERT_EQ(data->week_programs.size(), 3u);
  EXPECT_EQ(data->week_programs[0].program, "train");
  EXPECT_EQ(data->week_programs[0].served, 3);
  EXPECT_EQ(data->week_programs[0].saved_ms, 3 * search_ms);
  EXPECT_EQ(data->week_programs[0].week,
            WeekOfDay(data->served_days[0].day));
  EXPECT_EQ(data->week_programs[1].program, "");  // ties: by name
  EXPECT_EQ(data->week_programs[1].served, 1);
  EXPECT_EQ(data->week_programs[2].program, "eval");
  EXPECT_EQ(data->week_programs[2].saved_ms, search_ms);
  // A filtered report selects records, which the served days do not name.
  v1::ReportRequest filtered;
  (*filtered.mutable_filter()->mutable_fields())["n"] = "2";
  ASSERT_TRUE(Report(filtered, &response).ok());
  data = ReportDataFromJson(response.report_json());
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_TRUE(data->served_days.empty());
}

TEST_F(ReportRpcTest, AWarmsAnswersCountAsServedToItsProgram) {
  ASSERT_TRUE(LookupAs(1, "train").ok());
  server_->Shutdown(absl::Seconds(5));
  Start("second.sock");
  v1::WarmRequest warm;
  warm.set_program("train");
  ToProto(TestRecord(1).key.device, warm.mutable_device());
  grpc::ClientContext context;
  v1::WarmResponse warmed;
  ASSERT_TRUE(stub_->Warm(&context, warm, &warmed).ok());
  ASSERT_EQ(warmed.entries_size(), 1);
  EXPECT_EQ(warmed.entries(0).request().program(), "");  // as before
  server_->Shutdown(absl::Seconds(5));
  Start("third.sock");
  v1::ReportResponse response;
  ASSERT_TRUE(Report(v1::ReportRequest(), &response).ok());
  absl::StatusOr<ReportData> data = ReportDataFromJson(response.report_json());
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_EQ(data->week_programs.size(), 1u);
  EXPECT_EQ(data->week_programs[0].program, "train");
  EXPECT_EQ(data->week_programs[0].served, 2);
}

TEST_F(ReportRpcTest, AFilterThatQueryRefusesIsRefusedNamingIt) {
  v1::ReportRequest request;
  (*request.mutable_filter()->mutable_fields())["no_such_field"] = "1";
  const grpc::Status s = Refused(request);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), StartsWith("filter: "));
}

TEST_F(ReportRpcTest, MoreThanAHundredThousandPlannedProblemsAreRefused) {
  v1::ReportRequest request;
  // Counted before any is read: short texts keep the message small.
  for (int i = 0; i <= 100000; ++i) request.add_planned_problems("x");
  const grpc::Status s = Refused(request);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(),
              HasSubstr("planned_problems: 100001 problems, at most 100000"));
}

TEST_F(ReportRpcTest, APlannedProblemThatIsNotAProblemsTextIsRefusedNamingIt) {
  const Record r = TestRecord(1);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {r.key.ToText(), "planned_problems[1]: "},  // with its device
      {"op=fwd n=banana", "planned_problems[1]: "},
      {std::string(600, 'n'), "planned_problems[1]: 600 bytes, at most 512"},
  };
  for (const auto& [text, message] : cases) {
    v1::ReportRequest request;
    request.add_planned_problems(r.key.problem.ToText());
    request.add_planned_problems(text);
    const grpc::Status s = Refused(request);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << text;
    EXPECT_THAT(s.error_message(), StartsWith(message)) << text;
  }
}

TEST_F(ReportRpcTest, AnAggregateOverTheBoundIsRefusedNamingItsSize) {
  absl::StatusOr<std::string> json =
      StoreReport(store(), ReportArgs(), [] { return false; }, 100);
  EXPECT_TRUE(absl::IsFailedPrecondition(json.status())) << json.status();
  EXPECT_THAT(json.status().message(), HasSubstr("over the limit of 100: 1 "
                                                 "GPU model and cuDNN version "
                                                 "pairs"));
}

TEST_F(ReportRpcTest, ACancelledReportStopsWithCancelled) {
  absl::StatusOr<std::string> json =
      StoreReport(store(), ReportArgs(), [] { return true; });
  EXPECT_TRUE(absl::IsCancelled(json.status())) << json.status();
}

// The report holds no lock of the store's between records: a search's
// write and a Lookup both go through while it walks.
TEST_F(ReportRpcTest, TheStoreIsWrittenAndLookedUpWhileAReportWalksIt) {
  int visits = 0;
  absl::Status written, looked_up;
  absl::StatusOr<std::string> json =
      StoreReport(store(), ReportArgs(), [&] {
        if (++visits == 1) {
          written = store().Put(TestRecord(5)).status();
          v1::LookupRequest lookup;
          ToProto(TestRecord(1).key.problem, lookup.mutable_problem());
          ToProto(TestRecord(1).key.device, lookup.mutable_device());
          grpc::ClientContext context;
          v1::LookupResponse answer;
          const grpc::Status s = stub_->Lookup(&context, lookup, &answer);
          looked_up = FromGrpcStatus(s);
        }
        return false;
      });
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_TRUE(written.ok()) << written;
  EXPECT_TRUE(looked_up.ok()) << looked_up;
}

}  // namespace
}  // namespace tunedb
