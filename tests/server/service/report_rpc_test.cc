// The Report rpc through a real gRPC channel on a Unix socket, against an
// in-process daemon on a database file: the aggregate of the records a
// filter selects, its input refused naming the field, its bound, its
// cancellation, and the store written while a report walks it.
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
    ServerOptions options;
    options.unix_socket = dir_.File("tunedb.sock");
    options.store.path = dir_.File("tunedb.db");
    options.finder = "simulated";
    auto server = Server::BuildAndStart(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    stub_ = v1::TuneDb::NewStub(grpc::CreateChannel(
        server_->address(), grpc::InsecureChannelCredentials()));
    for (int64_t n = 1; n <= 4; ++n) {
      ASSERT_TRUE(store().Put(TestRecord(n)).ok());
    }
  }
  void TearDown() override { server_->Shutdown(absl::Seconds(5)); }

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
