// Warm through a real gRPC channel against an in-process daemon on the
// simulated finder: a program's Lookups are remembered (program_keys) and
// its next run gets them all answered in one call, exactly as Lookup
// answers them; other devices and programs get none; a job's first answer
// holds; the keys survive a restart on the same file; the bounds hold; and
// bad input is INVALID_ARGUMENT naming the field.
#include <string>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/convert.h"
#include "proto/wire_limits.h"
#include "server/service/server.h"
#include "server/service/wire_message.h"
#include "tests/server/test_util.h"
#include "tunedb/v1/tunedb.grpc.pb.h"

namespace tunedb {
namespace {

using testing_util::ProtoProblem;
using testing_util::TempDir;

constexpr char kProgram[] = "train-3f9a";

class WarmTest : public testing::Test {
 protected:
  void SetUp() override { Start(":memory:"); }
  void TearDown() override {
    if (server_) server_->Shutdown(absl::Seconds(5));
  }

  void Start(const std::string& db, ProgramKeys::Limits limits = {}) {
    ServerOptions options;
    options.unix_socket = dir_.File("tunedb.sock");
    options.store.path = db;
    options.finder = "simulated";
    options.core.program_keys = limits;
    auto server = Server::BuildAndStart(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    stub_ = v1::TuneDb::NewStub(grpc::CreateChannel(
        server_->address(), grpc::InsecureChannelCredentials()));
  }

  void Restart(const std::string& db, ProgramKeys::Limits limits = {}) {
    server_->Shutdown(absl::Seconds(5));
    server_.reset();
    Start(db, limits);
  }

  v1::DeviceKey Device() {
    grpc::ClientContext ctx;
    v1::DevicesResponse resp;
    EXPECT_TRUE(stub_->Devices(&ctx, v1::DevicesRequest(), &resp).ok());
    return resp.devices(0).key();
  }

  void Tune(int64_t n) {
    grpc::ClientContext ctx;
    v1::TuneRequest req;
    *req.mutable_problem() = ProtoProblem(n);
    v1::TuneResponse resp;
    ASSERT_TRUE(stub_->Tune(&ctx, req, &resp).ok());
  }

  v1::LookupRequest Asked(int64_t n, const std::string& program = kProgram) {
    v1::LookupRequest req;
    *req.mutable_problem() = ProtoProblem(n);
    *req.mutable_device() = Device();
    req.set_program(program);
    return req;
  }

  grpc::StatusCode Lookup(const v1::LookupRequest& req,
                          v1::LookupResponse* resp = nullptr) {
    grpc::ClientContext ctx;
    v1::LookupResponse ignored;
    return stub_->Lookup(&ctx, req, resp ? resp : &ignored).error_code();
  }

  v1::WarmRequest WarmOf(const std::string& program = kProgram) {
    v1::WarmRequest req;
    req.set_program(program);
    *req.mutable_device() = Device();
    return req;
  }

  // The Warm's entries; fails the test where it is not OK.
  v1::WarmResponse Warm(const v1::WarmRequest& req) {
    grpc::ClientContext ctx;
    v1::WarmResponse resp;
    grpc::Status s = stub_->Warm(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp;
  }

  grpc::Status WarmStatus(const v1::WarmRequest& req) {
    grpc::ClientContext ctx;
    v1::WarmResponse resp;
    return stub_->Warm(&ctx, req, &resp);
  }

  // The batch of each entry's problem, in order.
  static std::vector<int64_t> Batches(const v1::WarmResponse& resp) {
    std::vector<int64_t> out;
    for (const auto& e : resp.entries()) out.push_back(e.request().problem().n());
    return out;
  }

  TempDir dir_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<v1::TuneDb::Stub> stub_;
};

TEST_F(WarmTest, AProgramsSecondRunGetsEveryKeyInOneCallAsLookupAnswersIt) {
  // Batch 8 and 64 are tuned; 16 is predicted from them; a backward-data
  // key has nothing of its family stored.
  Tune(8);
  Tune(64);
  v1::LookupRequest backward = Asked(16);
  backward.mutable_problem()->set_op(v1::CONV_OP_BACKWARD_DATA);
  std::vector<v1::LookupRequest> asked = {Asked(8), Asked(16), Asked(64),
                                          backward};
  for (const v1::LookupRequest& req : asked) {
    for (int i = 0; i < 3; ++i) Lookup(req);  // asked often, kept once
  }
  EXPECT_EQ(server_->core().Stats().program_keys.remembered, 4);

  v1::WarmRequest warm = WarmOf();
  warm.set_predict(true);
  const v1::WarmResponse resp = Warm(warm);
  ASSERT_EQ(resp.entries_size(), 4);
  std::vector<int> codes;
  for (const v1::WarmEntry& entry : resp.entries()) {
    // The same request asked now, without a program, gets the same answer.
    v1::LookupRequest again = entry.request();
    EXPECT_TRUE(again.program().empty());
    EXPECT_TRUE(again.predict());
    v1::LookupResponse looked;
    codes.push_back(static_cast<int>(Lookup(again, &looked)));
    EXPECT_EQ(entry.code(), codes.back());
    if (entry.code() == 0) {
      EXPECT_EQ(DeterministicBytes(entry.response()),
                DeterministicBytes(looked));
    } else {
      EXPECT_FALSE(entry.has_response());
    }
  }
  // Newest first: the backward key (NOT_FOUND), 64 and 8 stored, 16
  // predicted.
  EXPECT_EQ(codes, (std::vector<int>{5, 0, 0, 0}));
  EXPECT_EQ(resp.entries(0).request().problem().op(),
            v1::CONV_OP_BACKWARD_DATA);
  EXPECT_TRUE(resp.entries(2).response().has_prediction());
  EXPECT_EQ(server_->core().Stats().program_keys.warms, 1);
  EXPECT_EQ(server_->core().Stats().program_keys.warm_keys, 4);

  // Without predict, the predicted key is NOT_FOUND, as Lookup says.
  warm.set_predict(false);
  warm.set_choice_only(true);
  const v1::WarmResponse plain = Warm(warm);
  ASSERT_EQ(plain.entries_size(), 4);
  EXPECT_EQ(plain.entries(2).code(), 5);
  EXPECT_FALSE(plain.entries(1).response().has_record());
  EXPECT_GT(plain.entries(1).response().record_id(), 0);
}

TEST_F(WarmTest, OnlyTheProgramsKeysOnTheAskedDeviceAreAnswered) {
  Tune(8);
  Lookup(Asked(8));
  Lookup(Asked(9, "another-program"));
  EXPECT_EQ(Batches(Warm(WarmOf())), (std::vector<int64_t>{8}));
  EXPECT_EQ(Batches(Warm(WarmOf("another-program"))),
            (std::vector<int64_t>{9}));
  EXPECT_EQ(Warm(WarmOf("never-asked")).entries_size(), 0);
  v1::WarmRequest other_device = WarmOf();
  other_device.mutable_device()->set_sm_count(
      other_device.device().sm_count() + 2);
  EXPECT_EQ(Warm(other_device).entries_size(), 0);
}

TEST_F(WarmTest, AJobsFirstAnswerHoldsThroughWarm) {
  v1::LookupRequest first = Asked(9);
  first.set_job("job-1");
  EXPECT_EQ(Lookup(first), grpc::StatusCode::NOT_FOUND);
  Tune(9);
  // The job's answer stays NOT_FOUND through Warm; without the job the
  // record answers.
  v1::WarmRequest warm = WarmOf();
  warm.set_job("job-1");
  v1::WarmResponse resp = Warm(warm);
  ASSERT_EQ(resp.entries_size(), 1);
  EXPECT_EQ(resp.entries(0).code(), 5);
  EXPECT_TRUE(resp.entries(0).request().job().empty());
  warm.clear_job();
  resp = Warm(warm);
  ASSERT_EQ(resp.entries_size(), 1);
  EXPECT_EQ(resp.entries(0).code(), 0);
  // And a job's first answer given by Warm holds for its later Lookups.
  warm.set_job("job-2");
  ASSERT_EQ(Warm(warm).entries(0).code(), 0);
  ASSERT_TRUE(server_->core().Invalidate(RecordFilter()).ok());
  v1::LookupRequest later = Asked(9);
  later.set_job("job-2");
  EXPECT_EQ(Lookup(later), grpc::StatusCode::OK);
  later.set_job("job-3");
  EXPECT_EQ(Lookup(later), grpc::StatusCode::NOT_FOUND);
}

TEST_F(WarmTest, RememberedKeysSurviveARestartOnTheSameFile) {
  const std::string db = dir_.File("tunedb.db");
  Restart(db);
  Tune(8);
  Lookup(Asked(8));
  Lookup(Asked(9));
  Restart(db);
  const v1::WarmResponse resp = Warm(WarmOf());
  EXPECT_EQ(Batches(resp), (std::vector<int64_t>{9, 8}));
  ASSERT_EQ(resp.entries_size(), 2);
  EXPECT_EQ(resp.entries(0).code(), 5);
  EXPECT_EQ(resp.entries(1).code(), 0);
}

TEST_F(WarmTest, AProgramKeepsItsNewestKeysAndMaxKeysCutsTheAnswer) {
  ProgramKeys::Limits limits;
  limits.max_keys_per_program = 3;
  Restart(":memory:", limits);
  for (int64_t n = 1; n <= 5; ++n) Lookup(Asked(n));
  v1::WarmRequest warm = WarmOf();
  EXPECT_EQ(Batches(Warm(warm)), (std::vector<int64_t>{5, 4, 3}));
  warm.set_max_keys(2);
  EXPECT_EQ(Batches(Warm(warm)), (std::vector<int64_t>{5, 4}));
}

TEST_F(WarmTest, TheResponseStopsBeforeItsByteBound) {
  // 40 stored records of 100 KB each (a big plan, not the choice's): 4 MB
  // in all.
  std::vector<Record> records;
  for (int64_t n = 1; n <= 40; ++n) {
    Record r = testing_util::GraphTestRecord(n);
    r.results[1].plan = std::string(100 << 10, 'p');
    records.push_back(r);
  }
  ASSERT_TRUE(server_->core().store().PutAll(records).ok());
  for (const Record& r : records) {
    v1::LookupRequest req;
    ToProto(r.key.problem, req.mutable_problem());
    ToProto(r.key.device, req.mutable_device());
    req.set_program(kProgram);
    req.set_choice_only(true);
    ASSERT_EQ(Lookup(req), grpc::StatusCode::OK);
  }
  v1::WarmRequest warm;
  warm.set_program(kProgram);
  ToProto(records[0].key.device, warm.mutable_device());
  const v1::WarmResponse resp = Warm(warm);
  EXPECT_GT(resp.entries_size(), 20);
  EXPECT_LT(resp.entries_size(), 40);
  EXPECT_LE(resp.ByteSizeLong(), kMaxWarmResponseBytes);
  // The newest keys come first; the rest are left to Lookups.
  EXPECT_EQ(resp.entries(0).request().problem().n(), 40);
}

TEST_F(WarmTest, BadInputIsInvalidArgumentNamingTheField) {
  auto expect_refused = [&](const v1::WarmRequest& req, const char* field) {
    grpc::Status s = WarmStatus(req);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << field;
    EXPECT_EQ(s.error_message().rfind(field, 0), 0u) << s.error_message();
  };
  v1::WarmRequest req = WarmOf();
  req.clear_program();
  expect_refused(req, "program");
  req.set_program("has spaces");
  expect_refused(req, "program");
  req.set_program(std::string(129, 'p'));
  expect_refused(req, "program");
  req = WarmOf();
  req.clear_device();
  expect_refused(req, "device");
  req = WarmOf();
  req.mutable_device()->clear_gpu_model();
  expect_refused(req, "device");
  req = WarmOf();
  req.set_job("no spaces");
  expect_refused(req, "job");
  req = WarmOf();
  req.set_max_keys(-1);
  expect_refused(req, "max_keys");

  // A Lookup's program follows the same rule, and nothing is remembered.
  v1::LookupRequest lookup = Asked(8, "bad program");
  grpc::ClientContext ctx;
  v1::LookupResponse resp;
  grpc::Status s = stub_->Lookup(&ctx, lookup, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message().rfind("program", 0), 0u) << s.error_message();
  EXPECT_EQ(server_->core().Stats().program_keys.remembered, 0);
}

}  // namespace
}  // namespace tunedb
