// The wire API as any client may speak it: hand-built messages through
// gRPC's generic stub (raw_call.h), not only our own client. A message that
// does not parse is INVALID_ARGUMENT naming it, never INTERNAL with no
// message nor the end of a stream; an import is all or nothing whatever the
// client sends; every string field has a length limit, and no error echoes
// an oversized value.
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/wire_limits.h"
#include "raw_call.h"
#include "server/service/server.h"
#include "tests/server/test_util.h"
#include "tunedb/v1/tunedb.grpc.pb.h"

namespace tunedb {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing_util::ProtoProblem;
using testing_util::RawCall;
using testing_util::RawReply;
using testing_util::TempDir;

// Bytes that are no protobuf message: a field 1 of length 100 with 2 bytes.
const std::string kGarbage = std::string("\x0a\x64\x01\x02", 4);

class WireTest : public testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.unix_socket = dir_.File("tunedb.sock");
    options.store.path = ":memory:";
    options.finder = "simulated";
    options.simulated_options = "slow_ms=1";
    auto server = Server::BuildAndStart(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    channel_ = grpc::CreateChannel(server_->address(),
                                   grpc::InsecureChannelCredentials());
    stub_ = v1::TuneDb::NewStub(channel_);
  }
  void TearDown() override { server_->Shutdown(absl::Seconds(5)); }

  // Export lines of `count` tuned problems, then an empty store.
  std::vector<std::string> ExportedLines(int count) {
    for (int n = 1; n <= count; ++n) {
      grpc::ClientContext ctx;
      v1::TuneRequest req;
      *req.mutable_problem() = ProtoProblem(n);
      v1::TuneResponse resp;
      EXPECT_TRUE(stub_->Tune(&ctx, req, &resp).ok());
    }
    std::vector<std::string> lines;
    grpc::ClientContext ctx;
    auto reader = stub_->Export(&ctx, v1::ExportRequest());
    v1::ExportLine line;
    while (reader->Read(&line)) lines.push_back(line.json());
    EXPECT_TRUE(reader->Finish().ok());
    grpc::ClientContext ictx;
    v1::InvalidateRequest all;
    all.set_all(true);
    v1::InvalidateResponse deleted;
    EXPECT_TRUE(stub_->Invalidate(&ictx, all, &deleted).ok());
    return lines;
  }

  int64_t StoredRecords() {
    grpc::ClientContext ctx;
    v1::StatsResponse stats;
    EXPECT_TRUE(stub_->Stats(&ctx, v1::StatsRequest(), &stats).ok());
    return stats.records();
  }

  static std::string Line(const std::string& json) {
    v1::ImportLine line;
    line.set_json(json);
    return line.SerializeAsString();
  }

  TempDir dir_;
  std::unique_ptr<Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::TuneDb::Stub> stub_;
};

TEST_F(WireTest, AnImportWhoseThirdMessageDoesNotParseImportsNothing) {
  std::vector<std::string> lines = ExportedLines(5);
  ASSERT_EQ(lines.size(), 5u);
  // No expected_lines: the daemon cannot count on knowing the length.
  RawReply reply = RawCall(channel_, "/tunedb.v1.TuneDb/Import",
                           {Line(lines[0]), Line(lines[1]), kGarbage,
                            Line(lines[3]), Line(lines[4])});
  ASSERT_TRUE(reply.status.ok()) << reply.status.error_message();
  ASSERT_EQ(reply.messages.size(), 1u);
  v1::ImportResponse response;
  ASSERT_TRUE(response.ParseFromString(reply.messages[0]));
  EXPECT_EQ(response.imported(), 0);
  EXPECT_EQ(response.lines(), 5) << "the messages after the bad one are read";
  EXPECT_EQ(response.rejected(), 1);
  ASSERT_EQ(response.rejects_size(), 1);
  EXPECT_EQ(response.rejects(0).line(), 3);
  EXPECT_THAT(response.rejects(0).reason(),
              HasSubstr("not a valid tunedb.v1.ImportLine"));
  EXPECT_EQ(StoredRecords(), 0);
}

TEST_F(WireTest, AnImportLineThatIsNotUtf8IsRejectedByItsLineNumber) {
  std::vector<std::string> lines = ExportedLines(4);
  ASSERT_EQ(lines.size(), 4u);
  // What a client with the field declared as a string sends as well.
  std::string bad = lines[2];
  bad.insert(10, "\xff\xfe");
  RawReply reply = RawCall(
      channel_, "/tunedb.v1.TuneDb/Import",
      {Line(lines[0]), Line(lines[1]), Line(bad), Line(lines[3])});
  ASSERT_TRUE(reply.status.ok()) << reply.status.error_message();
  v1::ImportResponse response;
  ASSERT_EQ(reply.messages.size(), 1u);
  ASSERT_TRUE(response.ParseFromString(reply.messages[0]));
  EXPECT_EQ(response.imported(), 0);
  ASSERT_EQ(response.rejects_size(), 1);
  EXPECT_EQ(response.rejects(0).line(), 3);
  EXPECT_EQ(response.rejects(0).reason(), "not valid UTF-8 (byte 11)");
  EXPECT_EQ(StoredRecords(), 0);
}

TEST_F(WireTest, AMalformedRequestIsInvalidArgumentNamingItsMessage) {
  const std::vector<std::pair<std::string, std::string>> methods = {
      {"Lookup", "tunedb.v1.LookupRequest"},
      {"Tune", "tunedb.v1.TuneRequest"},
      {"Query", "tunedb.v1.QueryRequest"},
      {"Export", "tunedb.v1.ExportRequest"},
      {"Invalidate", "tunedb.v1.InvalidateRequest"},
      {"ReportCounters", "tunedb.v1.ReportCountersRequest"},
      {"ImportStatus", "tunedb.v1.ImportStatusRequest"},
  };
  for (const auto& [method, message] : methods) {
    RawReply reply =
        RawCall(channel_, absl::StrCat("/tunedb.v1.TuneDb/", method),
                {kGarbage});
    EXPECT_EQ(reply.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << method << ": " << reply.status.error_message();
    EXPECT_THAT(reply.status.error_message(),
                HasSubstr(absl::StrCat("not a valid ", message)))
        << method;
    EXPECT_TRUE(reply.messages.empty()) << method;
  }
}

TEST_F(WireTest, ATuneBatchItemThatDoesNotParseIsAnsweredAndTheRestRun) {
  auto item = [](int64_t n) {
    v1::TuneBatchRequest in;
    *in.mutable_request()->mutable_problem() = ProtoProblem(n);
    return in.SerializeAsString();
  };
  RawReply reply = RawCall(channel_, "/tunedb.v1.TuneDb/TuneBatch",
                           {item(1), kGarbage, item(3)});
  ASSERT_TRUE(reply.status.ok()) << reply.status.error_message();
  ASSERT_EQ(reply.messages.size(), 3u);
  std::map<int64_t, v1::TuneBatchResponse> answers;
  for (const std::string& m : reply.messages) {
    v1::TuneBatchResponse out;
    ASSERT_TRUE(out.ParseFromString(m));
    answers[out.index()] = out;
  }
  EXPECT_EQ(answers[0].code(), 0) << answers[0].message();
  EXPECT_EQ(answers[1].code(),
            static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_THAT(answers[1].message(),
              HasSubstr("message 2 of the stream is not a valid "
                        "tunedb.v1.TuneBatchRequest"));
  EXPECT_EQ(answers[2].code(), 0) << answers[2].message();
  EXPECT_TRUE(answers[2].response().has_record());
}

TEST_F(WireTest, ALongGpuModelIsInvalidArgumentAndNotEchoed) {
  grpc::ClientContext ctx;
  v1::TuneRequest req;
  *req.mutable_problem() = ProtoProblem(8);
  v1::DeviceKey* device = req.mutable_device();
  device->set_gpu_model(std::string(100 * 1024, 'x'));
  device->set_cc_major(9);
  device->set_sm_count(132);
  device->set_cudnn_version(91900);
  device->set_cuda_runtime_version(13000);
  v1::TuneResponse resp;
  grpc::Status s = stub_->Tune(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << s.error_message().substr(0, 200);
  EXPECT_THAT(s.error_message(), HasSubstr("102400 bytes, at most 256"));
  EXPECT_THAT(s.error_message(), Not(HasSubstr(std::string(300, 'x'))));
}

TEST_F(WireTest, FilterFieldsHaveLengthLimitsThatAreNotEchoed) {
  auto query = [&](const std::string& name, const std::string& value) {
    grpc::ClientContext ctx;
    v1::QueryRequest req;
    (*req.mutable_filter()->mutable_fields())[name] = value;
    auto reader = stub_->Query(&ctx, req);
    v1::Record r;
    while (reader->Read(&r)) {
    }
    return reader->Finish();
  };
  grpc::Status long_value = query("gpu", std::string(5000, 'v'));
  EXPECT_EQ(long_value.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(long_value.error_message(),
              HasSubstr("filter field gpu: 5000 bytes, at most 256"));
  grpc::Status long_name = query(std::string(5000, 'n'), "1");
  EXPECT_EQ(long_name.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(long_name.error_message(),
              HasSubstr("filter field name: 5000 bytes, at most 32"));
  EXPECT_THAT(long_name.error_message(), Not(HasSubstr(std::string(40, 'n'))));
}

TEST_F(WireTest, ImportStatusTellsWhetherANamedImportCommitted) {
  std::vector<std::string> lines = ExportedLines(3);
  auto import = [&](const std::string& id) {
    grpc::ClientContext ctx;
    v1::ImportResponse resp;
    auto writer = stub_->Import(&ctx, &resp);
    for (size_t i = 0; i < lines.size(); ++i) {
      v1::ImportLine line;
      line.set_json(lines[i]);
      if (i == 0) line.set_import_id(id);
      writer->Write(line);
    }
    writer->WritesDone();
    return writer->Finish();
  };
  auto status_of = [&](const std::string& id, v1::ImportStatusResponse* out) {
    grpc::ClientContext ctx;
    v1::ImportStatusRequest req;
    req.set_import_id(id);
    return stub_->ImportStatus(&ctx, req, out);
  };
  v1::ImportStatusResponse before;
  ASSERT_TRUE(status_of("import-abc", &before).ok());
  EXPECT_FALSE(before.committed());

  ASSERT_TRUE(import("import-abc").ok());
  v1::ImportStatusResponse after;
  ASSERT_TRUE(status_of("import-abc", &after).ok());
  EXPECT_TRUE(after.committed());
  EXPECT_EQ(after.imported(), 3);
  EXPECT_EQ(after.lines(), 3);
  EXPECT_GT(after.committed_at_us(), 0);

  // The same name again imports nothing a second time.
  grpc::Status again = import("import-abc");
  EXPECT_EQ(again.error_code(), grpc::StatusCode::ALREADY_EXISTS)
      << again.error_message();
  EXPECT_THAT(again.error_message(), HasSubstr("committed already"));

  v1::ImportStatusResponse bad;
  grpc::Status refused = status_of("no spaces allowed", &bad);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status_of(std::string(65, 'a'), &bad).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(WireTest, OnlyTheCallThatRanASearchSaysSearched) {
  // Eight identical Tunes at once: one search, one caller that ran it, the
  // others waited for it.
  std::vector<v1::TuneResponse> answers(8);
  std::vector<std::thread> threads;
  for (auto& answer : answers) {
    threads.emplace_back([&] {
      grpc::ClientContext ctx;
      v1::TuneRequest req;
      *req.mutable_problem() = ProtoProblem(77);
      EXPECT_TRUE(stub_->Tune(&ctx, req, &answer).ok());
    });
  }
  for (auto& t : threads) t.join();
  int searched = 0, waited = 0;
  for (const auto& a : answers) {
    searched += a.searched();
    waited += a.waited_for_search();
    EXPECT_FALSE(a.searched() && a.waited_for_search());
  }
  EXPECT_EQ(searched, 1);
  grpc::ClientContext ctx;
  v1::StatsResponse stats;
  ASSERT_TRUE(stub_->Stats(&ctx, v1::StatsRequest(), &stats).ok());
  EXPECT_EQ(stats.searches(), 1);
  EXPECT_EQ(waited, stats.coalesced());
}

}  // namespace
}  // namespace tunedb
