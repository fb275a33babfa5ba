// The TuneDb service through a real gRPC channel on a Unix socket, against
// an in-process server on the simulated finder.
#include <malloc.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/convert.h"
#include "server/service/job_answers.h"
#include "server/service/server.h"
#include "store/record_json.h"
#include "tests/server/test_util.h"
#include "tunedb/v1/tunedb.grpc.pb.h"

namespace tunedb {
namespace {

using testing_util::ProtoProblem;
using testing_util::TempDir;

class ServiceTest : public testing::Test {
 protected:
  void SetUp() override { StartServer("slow_ms=5"); }
  void TearDown() override {
    if (server_) server_->Shutdown(absl::Seconds(5));
  }

  void StartServer(const std::string& sim, const std::string& db = ":memory:") {
    ServerOptions options;
    options.unix_socket = dir_.File("tunedb.sock");
    options.store.path = db;
    options.finder = "simulated";
    options.simulated_options = sim;
    auto server = Server::BuildAndStart(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    channel_ = grpc::CreateChannel(server_->address(),
                                   grpc::InsecureChannelCredentials());
    stub_ = v1::TuneDb::NewStub(channel_);
  }

  v1::DeviceKey Device() {
    grpc::ClientContext ctx;
    v1::DevicesRequest req;
    v1::DevicesResponse resp;
    EXPECT_TRUE(stub_->Devices(&ctx, req, &resp).ok());
    return resp.devices(0).key();
  }

  grpc::Status Tune(int64_t n, v1::TuneResponse* resp, bool force = false) {
    grpc::ClientContext ctx;
    v1::TuneRequest req;
    *req.mutable_problem() = ProtoProblem(n);
    req.set_force(force);
    return stub_->Tune(&ctx, req, resp);
  }

  // A record of batch `n` stored under cuDNN 9.14 only: batch 32's results
  // (searched here under the daemon's 9.19), restated.
  Record StoreUnderCudnn914(int64_t n) {
    v1::TuneResponse tuned;
    EXPECT_TRUE(Tune(32, &tuned).ok());
    absl::StatusOr<Record> old = FromProto(tuned.record());
    EXPECT_TRUE(old.ok()) << old.status();
    old->id = 0;
    old->key.problem.n = n;
    old->key.device.cudnn_version = 91400;
    EXPECT_TRUE(server_->core().store().Put(*old).ok());
    return *old;
  }

  // Tunes problems 1..count, exports them, and restarts on an empty database;
  // returns the exported lines.
  std::vector<std::string> ExportFromAFilledDaemon(int64_t count) {
    for (int64_t n = 1; n <= count; ++n) {
      v1::TuneResponse resp;
      EXPECT_TRUE(Tune(n, &resp).ok());
    }
    std::vector<std::string> lines;
    grpc::ClientContext ctx;
    auto reader = stub_->Export(&ctx, v1::ExportRequest());
    v1::ExportLine line;
    while (reader->Read(&line)) lines.push_back(line.json());
    EXPECT_TRUE(reader->Finish().ok());
    server_->Shutdown(absl::Seconds(1));
    server_.reset();
    StartServer("");
    return lines;
  }

  TempDir dir_;
  std::unique_ptr<Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::TuneDb::Stub> stub_;
};

TEST_F(ServiceTest, TuneThenLookup) {
  v1::TuneResponse tuned;
  ASSERT_TRUE(Tune(8, &tuned).ok());
  EXPECT_TRUE(tuned.searched());
  EXPECT_TRUE(tuned.has_choice());
  EXPECT_EQ(tuned.record().finder(), "simulated");
  EXPECT_EQ(tuned.record().key_hash().size(), 16u);

  grpc::ClientContext ctx;
  v1::LookupRequest req;
  *req.mutable_problem() = ProtoProblem(8);
  *req.mutable_device() = Device();
  v1::LookupResponse resp;
  grpc::Status s = stub_->Lookup(&ctx, req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.choice().algo().algo(), tuned.choice().algo().algo());
  EXPECT_EQ(resp.record().key_text(), tuned.record().key_text());
  auto parsed = ProblemKey::Parse(resp.record().key_text());
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(resp.record_id(), tuned.record().id());
  EXPECT_EQ(resp.measured_at_us(), tuned.record().measured_at_us());

  // choice_only: the same choice, no record.
  grpc::ClientContext ctx2;
  req.set_choice_only(true);
  v1::LookupResponse slim;
  ASSERT_TRUE(stub_->Lookup(&ctx2, req, &slim).ok());
  EXPECT_EQ(slim.choice().algo().algo(), tuned.choice().algo().algo());
  EXPECT_FALSE(slim.has_record());
  EXPECT_EQ(slim.measured_at_us(), tuned.record().measured_at_us());
}

TEST_F(ServiceTest, LookupMissIsNotFoundAndDoesNotSearch) {
  grpc::ClientContext ctx;
  v1::LookupRequest req;
  *req.mutable_problem() = ProtoProblem(9);
  *req.mutable_device() = Device();
  v1::LookupResponse resp;
  EXPECT_EQ(stub_->Lookup(&ctx, req, &resp).error_code(),
            grpc::StatusCode::NOT_FOUND);
  grpc::ClientContext sctx;
  v1::StatsResponse stats;
  ASSERT_TRUE(stub_->Stats(&sctx, v1::StatsRequest(), &stats).ok());
  EXPECT_EQ(stats.searches(), 0);
  EXPECT_EQ(stats.misses(), 1);
  EXPECT_EQ(stats.finder(), "simulated");
}

TEST_F(ServiceTest, AMissAskedAsOkIsOkWithNotStoredAndNothingElse) {
  v1::LookupRequest req;
  *req.mutable_problem() = ProtoProblem(9);
  *req.mutable_device() = Device();
  req.set_miss_as_ok(true);
  {
    grpc::ClientContext ctx;
    v1::LookupResponse resp;
    ASSERT_TRUE(stub_->Lookup(&ctx, req, &resp).ok());
    EXPECT_TRUE(resp.not_stored());
    EXPECT_FALSE(resp.has_choice());
    EXPECT_FALSE(resp.has_record());
    EXPECT_EQ(resp.record_id(), 0);
    grpc::ClientContext sctx;
    v1::StatsResponse stats;
    ASSERT_TRUE(stub_->Stats(&sctx, v1::StatsRequest(), &stats).ok());
    EXPECT_EQ(stats.misses(), 1);  // a miss all the same
  }
  // Once stored, the same request gets the answer, not_stored unset.
  v1::TuneResponse tuned;
  ASSERT_TRUE(Tune(9, &tuned).ok());
  grpc::ClientContext ctx;
  v1::LookupResponse resp;
  ASSERT_TRUE(stub_->Lookup(&ctx, req, &resp).ok());
  EXPECT_FALSE(resp.not_stored());
  EXPECT_EQ(resp.choice().algo().algo(), tuned.choice().algo().algo());
  // An error other than a miss stays an error.
  req.mutable_problem()->set_n(-1);
  grpc::ClientContext bad;
  EXPECT_EQ(stub_->Lookup(&bad, req, &resp).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ServiceTest, AJobsLookupsGetItsFirstAnswerAfterTheRecordChanged) {
  v1::LookupRequest req;
  *req.mutable_problem() = ProtoProblem(9);
  *req.mutable_device() = Device();
  req.set_job("job-1");
  auto lookup = [&](v1::LookupResponse* resp) {
    grpc::ClientContext ctx;
    return stub_->Lookup(&ctx, req, resp).error_code();
  };
  v1::LookupResponse resp;
  EXPECT_EQ(lookup(&resp), grpc::StatusCode::NOT_FOUND);
  v1::TuneResponse tuned;
  ASSERT_TRUE(Tune(9, &tuned).ok());
  // The job's answer stays NOT_FOUND; another job, and no job, see the
  // record.
  EXPECT_EQ(lookup(&resp), grpc::StatusCode::NOT_FOUND);
  req.set_job("job-2");
  EXPECT_EQ(lookup(&resp), grpc::StatusCode::OK);
  EXPECT_EQ(resp.choice().algo().algo(), tuned.choice().algo().algo());
  req.clear_job();
  EXPECT_EQ(lookup(&resp), grpc::StatusCode::OK);
  // A job id that breaks the rule is refused.
  req.set_job("no spaces");
  EXPECT_EQ(lookup(&resp), grpc::StatusCode::INVALID_ARGUMENT);
  req.set_job(std::string(129, 'j'));
  EXPECT_EQ(lookup(&resp), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST(JobAnswersTest, AnIdleJobIsForgottenAndAFullTableFixesNothingNew) {
  JobAnswers::Options o;
  o.idle_ttl = absl::Hours(1);
  o.max_entries = 2;
  JobAnswers answers(o);
  const absl::Time t0 = absl::FromUnixSeconds(1'000'000);
  v1::LookupResponse r;
  r.set_record_id(7);
  EXPECT_TRUE(answers.Fix("a", "k1", absl::OkStatus(), &r, t0).ok());
  v1::LookupResponse later;
  later.set_record_id(8);
  EXPECT_TRUE(answers.Fix("a", "k1", absl::OkStatus(), &later, t0).ok());
  EXPECT_EQ(later.record_id(), 7);  // the first answer
  EXPECT_TRUE(absl::IsNotFound(answers.Fix(
      "b", "k1", absl::NotFoundError("none"), &later, t0)));
  // Full: a third answer is given but not fixed.
  v1::LookupResponse third;
  third.set_record_id(9);
  EXPECT_TRUE(answers.Fix("c", "k1", absl::OkStatus(), &third, t0).ok());
  EXPECT_EQ(answers.not_fixed(), 1);
  EXPECT_EQ(answers.entries(), 2);
  // Two hours on, both jobs are forgotten: job a's next answer is new.
  v1::LookupResponse fresh;
  fresh.set_record_id(10);
  EXPECT_TRUE(
      answers.Fix("a", "k1", absl::OkStatus(), &fresh, t0 + absl::Hours(2))
          .ok());
  EXPECT_EQ(fresh.record_id(), 10);
  EXPECT_EQ(answers.jobs(), 1);
}

TEST_F(ServiceTest, ALookupMissUnderANewCudnnIsPredictedFromTheOldVersionsChoice) {
  const Record old = StoreUnderCudnn914(16);
  // A neighbour shape under 9.19 too: the other version's answer wins.
  v1::TuneResponse near;
  ASSERT_TRUE(Tune(8, &near).ok());

  grpc::ClientContext ctx;
  v1::LookupRequest req;
  *req.mutable_problem() = ProtoProblem(16);
  *req.mutable_device() = Device();
  req.set_predict(true);
  v1::LookupResponse resp;
  grpc::Status s = stub_->Lookup(&ctx, req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_TRUE(resp.has_prediction());
  const v1::Prediction& p = resp.prediction();
  ASSERT_EQ(p.source_keys_size(), 1);
  EXPECT_EQ(p.source_keys(0), old.key.ToText());
  EXPECT_NE(p.source_keys(0).find("cudnn=9.14.0"), std::string::npos);
  EXPECT_EQ(p.distance(), 0);
  EXPECT_EQ(resp.choice().algo().algo(), Choose(old, {})->algo);
  EXPECT_TRUE(resp.choice().algo().plan().empty());
}

TEST_F(ServiceTest, PredictFromOtherVersionsAloneAnswersFromAnotherVersionNotFromNeighbours) {
  // Batch 32, tuned, is a neighbour of batch 16 and 24.
  const Record old = StoreUnderCudnn914(16);

  v1::LookupRequest req;
  *req.mutable_device() = Device();
  req.set_predict_from_other_versions(true);
  *req.mutable_problem() = ProtoProblem(16);
  grpc::ClientContext ctx;
  v1::LookupResponse resp;
  grpc::Status s = stub_->Lookup(&ctx, req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(resp.prediction().source_keys_size(), 1);
  EXPECT_EQ(resp.prediction().source_keys(0), old.key.ToText());
  // Batch 24 is stored under no version: its neighbours do not answer.
  *req.mutable_problem() = ProtoProblem(24);
  grpc::ClientContext miss;
  EXPECT_EQ(stub_->Lookup(&miss, req, &resp).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(ServiceTest, AnOlderVersionsRecordImportedAfterAMissIsPredictedFromAtOnce) {
  // Only 9.19 is stored: the miss finds no other version to predict from.
  v1::TuneResponse tuned;
  ASSERT_TRUE(Tune(32, &tuned).ok());
  v1::LookupRequest req;
  *req.mutable_device() = Device();
  *req.mutable_problem() = ProtoProblem(16);
  req.set_predict_from_other_versions(true);
  v1::LookupResponse resp;
  grpc::ClientContext miss;
  ASSERT_EQ(stub_->Lookup(&miss, req, &resp).error_code(),
            grpc::StatusCode::NOT_FOUND);

  absl::StatusOr<Record> old = FromProto(tuned.record());
  ASSERT_TRUE(old.ok()) << old.status();
  old->id = 0;
  old->key.problem.n = 16;
  old->key.device.cudnn_version = 91400;
  grpc::ClientContext import_ctx;
  v1::ImportResponse imported;
  auto writer = stub_->Import(&import_ctx, &imported);
  v1::ImportLine line;
  line.set_json(RecordToJson(*old));
  ASSERT_TRUE(writer->Write(line));
  writer->WritesDone();
  ASSERT_TRUE(writer->Finish().ok());
  ASSERT_EQ(imported.imported(), 1);

  grpc::ClientContext again;
  grpc::Status s = stub_->Lookup(&again, req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(resp.prediction().source_keys_size(), 1);
  EXPECT_EQ(resp.prediction().source_keys(0), old->key.ToText());
}

TEST_F(ServiceTest, ALookupMissAsksForAPredictionFromTheNearestTunedShape) {
  // Batch 8 and 64 are tuned; batch 16 never was.
  v1::TuneResponse near, far;
  ASSERT_TRUE(Tune(8, &near).ok());
  ASSERT_TRUE(Tune(64, &far).ok());
  grpc::ClientContext ctx;
  v1::LookupRequest req;
  *req.mutable_problem() = ProtoProblem(16);
  *req.mutable_device() = Device();
  req.set_predict(true);
  v1::LookupResponse resp;
  grpc::Status s = stub_->Lookup(&ctx, req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_TRUE(resp.has_prediction());
  const v1::Prediction& p = resp.prediction();
  ASSERT_GE(p.candidates_size(), 1);
  EXPECT_EQ(resp.choice().algo().algo(), p.candidates(0).algo());
  EXPECT_TRUE(resp.choice().algo().plan().empty());
  EXPECT_GT(p.confidence(), 0);
  EXPECT_LE(p.confidence(), 1);
  EXPECT_NEAR(p.distance(), std::log(2.0), 1e-9);  // batch 8 is 2x away
  ASSERT_GE(p.source_keys_size(), 1);
  // Batch 8 is nearest: where the two disagree it wins; it votes either way.
  EXPECT_EQ(p.source_keys(0), near.record().key_text());
  EXPECT_FALSE(resp.has_record());
  EXPECT_EQ(resp.record_id(), 0);

  // Without predict, the same miss is NOT_FOUND; a family with nothing
  // tuned is NOT_FOUND even with it.
  grpc::ClientContext plain;
  req.set_predict(false);
  EXPECT_EQ(stub_->Lookup(&plain, req, &resp).error_code(),
            grpc::StatusCode::NOT_FOUND);
  grpc::ClientContext other;
  req.set_predict(true);
  *req.mutable_problem() = ProtoProblem(16, 64, 64);
  req.mutable_problem()->set_op(v1::CONV_OP_BACKWARD_DATA);
  EXPECT_EQ(stub_->Lookup(&other, req, &resp).error_code(),
            grpc::StatusCode::NOT_FOUND);
  grpc::ClientContext sctx;
  v1::StatsResponse stats;
  ASSERT_TRUE(stub_->Stats(&sctx, v1::StatsRequest(), &stats).ok());
  EXPECT_EQ(stats.predictions(), 1);
  EXPECT_EQ(stats.searches(), 2);  // a prediction searches nothing
}

struct BadRequest {
  const char* name;
  std::function<void(v1::TuneRequest*)> mutate;
  grpc::StatusCode code;
  const char* mention;
};

TEST_F(ServiceTest, BadTuneRequestsGetClearStatuses) {
  std::vector<BadRequest> cases = {
      {"no problem", [](v1::TuneRequest* r) { r->clear_problem(); },
       grpc::StatusCode::INVALID_ARGUMENT, "problem"},
      {"groups",
       [](v1::TuneRequest* r) { r->mutable_problem()->set_groups(5); },
       grpc::StatusCode::INVALID_ARGUMENT, "groups"},
      {"op",
       [](v1::TuneRequest* r) { r->mutable_problem()->set_op(v1::ConvOp(42)); },
       grpc::StatusCode::INVALID_ARGUMENT, "op"},
      {"rank", [](v1::TuneRequest* r) { r->mutable_problem()->add_padding(1); },
       grpc::StatusCode::INVALID_ARGUMENT, "padding"},
      {"negative n",
       [](v1::TuneRequest* r) { r->mutable_problem()->set_n(-1); },
       grpc::StatusCode::INVALID_ARGUMENT, "n"},
      {"layout",
       [](v1::TuneRequest* r) { r->mutable_problem()->clear_layout(); },
       grpc::StatusCode::INVALID_ARGUMENT, "layout"},
      {"workspace",
       [](v1::TuneRequest* r) {
         r->mutable_constraints()->set_max_workspace_bytes(-5);
       },
       grpc::StatusCode::INVALID_ARGUMENT, "max_workspace_bytes"},
      {"device",
       [this](v1::TuneRequest* r) {
         *r->mutable_device() = Device();
         r->mutable_device()->set_gpu_model("Imaginary GPU");
       },
       grpc::StatusCode::FAILED_PRECONDITION, "Imaginary"},
      {"return_if_held without when_idle",
       [](v1::TuneRequest* r) { r->set_return_if_held(true); },
       grpc::StatusCode::INVALID_ARGUMENT, "return_if_held"},
      {"revalidate_older_driver with force",
       [](v1::TuneRequest* r) {
         r->set_revalidate_older_driver(true);
         r->set_force(true);
       },
       grpc::StatusCode::INVALID_ARGUMENT, "revalidate_older_driver"},
      {"revalidate_older_driver with revalidate_from_cudnn",
       [](v1::TuneRequest* r) {
         r->set_revalidate_older_driver(true);
         r->set_revalidate_from_cudnn(91400);
       },
       grpc::StatusCode::INVALID_ARGUMENT, "revalidate_older_driver"},
  };
  for (const auto& c : cases) {
    v1::TuneRequest req;
    *req.mutable_problem() = ProtoProblem(8);
    c.mutate(&req);
    grpc::ClientContext ctx;
    v1::TuneResponse resp;
    grpc::Status s = stub_->Tune(&ctx, req, &resp);
    EXPECT_EQ(s.error_code(), c.code) << c.name << ": " << s.error_message();
    EXPECT_NE(s.error_message().find(c.mention), std::string::npos)
        << c.name << ": " << s.error_message();
  }
  // The daemon is still healthy.
  v1::TuneResponse ok;
  EXPECT_TRUE(Tune(8, &ok).ok());
}

TEST_F(ServiceTest, ReportedCountersAddUpInStatsAndBadReportsAreRefused) {
  auto report = [&](const std::string& source,
                    std::map<std::string, int64_t> counts) {
    grpc::ClientContext ctx;
    v1::ReportCountersRequest req;
    req.set_source(source);
    for (const auto& [name, count] : counts)
      (*req.mutable_counts())[name] = count;
    v1::ReportCountersResponse resp;
    return stub_->ReportCounters(&ctx, req, &resp);
  };
  ASSERT_TRUE(report("preload", {{"calls", 3}, {"hit", 2}, {"miss", 1}}).ok());
  ASSERT_TRUE(report("preload", {{"calls", 4}, {"hit", 4}}).ok());
  EXPECT_EQ(report("Pre load", {{"hit", 1}}).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(report("preload", {{"hit", -1}}).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(report("preload", {{std::string(33, 'a'), 1}}).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  std::map<std::string, int64_t> many;
  for (int i = 0; i < 65; ++i) many["n" + std::to_string(i)] = 1;
  EXPECT_EQ(report("preload", many).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  // Past 256 distinct names in all, new names of every source are summed in
  // one series, "other".
  for (int batch = 0; batch < 4; ++batch) {
    std::map<std::string, int64_t> names;
    for (int i = 0; i < 63; ++i) {
      names["b" + std::to_string(batch) + "_" + std::to_string(i)] = 1;
    }
    ASSERT_TRUE(report("many", names).ok()) << batch;
  }
  ASSERT_TRUE(report("many", {{"x1", 1}, {"x2", 2}, {"b0_0", 5}}).ok());
  // An empty report adds nothing.
  ASSERT_TRUE(report("preload", {}).ok());

  grpc::ClientContext sctx;
  v1::StatsResponse stats;
  ASSERT_TRUE(stub_->Stats(&sctx, v1::StatsRequest(), &stats).ok());
  EXPECT_EQ(stats.reports(), 7);  // the refused and empty ones add nothing
  EXPECT_EQ(stats.reported().at("preload.calls"), 7);
  EXPECT_EQ(stats.reported().at("preload.hit"), 6);
  EXPECT_EQ(stats.reported().at("preload.miss"), 1);
  EXPECT_EQ(stats.reported().size(), 256u + 1u);
  EXPECT_EQ(stats.reported().at("many.x1"), 1);     // the 256th name
  EXPECT_EQ(stats.reported().at("other"), 2);  // x2, past the bound
  EXPECT_EQ(stats.reported().at("many.b0_0"), 6);   // known names still add
}

// Issue 50: each new source past the bound made its own "<source>.other"
// series. 1,000 new sources now add one series in all.
TEST_F(ServiceTest, ReportedSeriesStayBoundedHoweverManySources) {
  auto report = [&](const std::string& source,
                    const std::map<std::string, int64_t>& counts) {
    grpc::ClientContext ctx;
    v1::ReportCountersRequest req;
    req.set_source(source);
    for (const auto& [name, count] : counts)
      (*req.mutable_counts())[name] = count;
    v1::ReportCountersResponse resp;
    return stub_->ReportCounters(&ctx, req, &resp);
  };
  for (int batch = 0; batch < 4; ++batch) {
    std::map<std::string, int64_t> names;
    for (int i = 0; i < 64; ++i) names["n" + std::to_string(i)] = 1;
    ASSERT_TRUE(report("fill" + std::to_string(batch), names).ok());
  }
  for (int source = 0; source < 1000; ++source) {
    ASSERT_TRUE(
        report("s" + std::to_string(source), {{"hit", 1}, {"miss", 1}}).ok());
  }
  grpc::ClientContext sctx;
  v1::StatsResponse stats;
  ASSERT_TRUE(stub_->Stats(&sctx, v1::StatsRequest(), &stats).ok());
  EXPECT_LE(stats.reported().size(), 256u + 1u);
  EXPECT_EQ(stats.reported().at("other"), 2000);
}

TEST_F(ServiceTest, LookupWithoutDeviceIsInvalid) {
  grpc::ClientContext ctx;
  v1::LookupRequest req;
  *req.mutable_problem() = ProtoProblem(8);
  v1::LookupResponse resp;
  grpc::Status s = stub_->Lookup(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("device"), std::string::npos);
}

TEST_F(ServiceTest, HealthServiceReportsServing) {
  auto health = grpc::health::v1::Health::NewStub(channel_);
  grpc::ClientContext ctx;
  grpc::health::v1::HealthCheckRequest req;
  grpc::health::v1::HealthCheckResponse resp;
  ASSERT_TRUE(health->Check(&ctx, req, &resp).ok());
  EXPECT_EQ(resp.status(), grpc::health::v1::HealthCheckResponse::SERVING);
}

// The probe listener (--health-listen) is plain TCP and carries the health
// status only: TuneDb is not served there.
TEST(HealthListenerTest, ServesOnlyTheHealthServiceOverPlainTcp) {
  TempDir dir;
  ServerOptions options;
  options.unix_socket = dir.File("h.sock");
  options.store.path = ":memory:";
  options.finder = "simulated";
  options.health_address = "127.0.0.1:0";
  auto server = Server::BuildAndStart(options);
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_GT((*server)->health_port(), 0);
  auto channel =
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", (*server)->health_port()),
                          grpc::InsecureChannelCredentials());
  auto deadline = [] {
    return std::chrono::system_clock::now() + std::chrono::seconds(5);
  };
  auto health = grpc::health::v1::Health::NewStub(channel);
  grpc::health::v1::HealthCheckRequest req;
  grpc::health::v1::HealthCheckResponse resp;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline());
    ASSERT_TRUE(health->Check(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.status(), grpc::health::v1::HealthCheckResponse::SERVING);
  }
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline());
    v1::DevicesResponse devices;
    EXPECT_EQ(v1::TuneDb::NewStub(channel)
                  ->Devices(&ctx, v1::DevicesRequest(), &devices)
                  .error_code(),
              grpc::StatusCode::UNIMPLEMENTED);
  }
  (*server)->Shutdown(absl::Seconds(1));
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline());
    EXPECT_FALSE(health->Check(&ctx, req, &resp).ok()) << "stopped with it";
  }
}

TEST_F(ServiceTest, ManyClientThreadsOverTheSocket) {
  constexpr int kThreads = 16, kCalls = 40;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  v1::DeviceKey device = Device();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Each thread its own channel, as separate processes would have.
      auto stub = v1::TuneDb::NewStub(grpc::CreateChannel(
          server_->address(), grpc::InsecureChannelCredentials()));
      for (int i = 0; i < kCalls; ++i) {
        int64_t n = 1 + (t * kCalls + i) % 24;  // overlapping problems
        grpc::ClientContext ctx;
        v1::TuneRequest req;
        *req.mutable_problem() = ProtoProblem(n);
        v1::TuneResponse resp;
        grpc::Status s = stub->Tune(&ctx, req, &resp);
        if (!s.ok() || !resp.has_choice()) ++failures;
        grpc::ClientContext lctx;
        v1::LookupRequest lreq;
        *lreq.mutable_problem() = ProtoProblem(n);
        *lreq.mutable_device() = device;
        v1::LookupResponse lresp;
        if (!stub->Lookup(&lctx, lreq, &lresp).ok()) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  grpc::ClientContext ctx;
  v1::StatsResponse stats;
  ASSERT_TRUE(stub_->Stats(&ctx, v1::StatsRequest(), &stats).ok());
  EXPECT_EQ(stats.records(), 24);
  EXPECT_EQ(stats.searches(), 24);
}

TEST_F(ServiceTest, TuneBatchAnswersEveryItemByIndex) {
  grpc::ClientContext ctx;
  auto stream = stub_->TuneBatch(&ctx);
  std::vector<int64_t> ns = {1, 2, 3, 2, 1, -4, 5};
  for (int64_t n : ns) {
    v1::TuneBatchRequest req;
    *req.mutable_request()->mutable_problem() = ProtoProblem(n);
    req.set_expected_total(static_cast<int64_t>(ns.size()));
    ASSERT_TRUE(stream->Write(req));
  }
  stream->WritesDone();
  std::map<int64_t, v1::TuneBatchResponse> answers;
  v1::TuneBatchResponse resp;
  int64_t last_done = 0;
  while (stream->Read(&resp)) {
    EXPECT_GT(resp.done(), last_done);
    last_done = resp.done();
    answers[resp.index()] = resp;
  }
  ASSERT_TRUE(stream->Finish().ok());
  ASSERT_EQ(answers.size(), ns.size());
  for (size_t i = 0; i < ns.size(); ++i) {
    if (ns[i] < 0) {
      EXPECT_EQ(answers[i].code(), grpc::StatusCode::INVALID_ARGUMENT);
      EXPECT_NE(answers[i].message().find("n"), std::string::npos);
    } else {
      EXPECT_EQ(answers[i].code(), 0) << answers[i].message();
      EXPECT_TRUE(answers[i].response().has_choice());
    }
  }
  EXPECT_EQ(last_done, static_cast<int64_t>(ns.size()));
  grpc::ClientContext sctx;
  v1::StatsResponse stats;
  ASSERT_TRUE(stub_->Stats(&sctx, v1::StatsRequest(), &stats).ok());
  EXPECT_EQ(stats.searches(), 4);  // 1, 2, 3, 5: duplicates searched once
}

std::vector<v1::Record> QueryAll(v1::TuneDb::Stub* stub, v1::QueryRequest req) {
  grpc::ClientContext ctx;
  auto reader = stub->Query(&ctx, req);
  std::vector<v1::Record> out;
  v1::Record r;
  while (reader->Read(&r)) out.push_back(r);
  EXPECT_TRUE(reader->Finish().ok());
  return out;
}

TEST_F(ServiceTest, QueryFiltersAndPages) {
  for (int64_t n = 1; n <= 5; ++n) {
    v1::TuneResponse resp;
    ASSERT_TRUE(Tune(n, &resp).ok());
  }
  v1::QueryRequest all;
  EXPECT_EQ(QueryAll(stub_.get(), all).size(), 5u);

  v1::QueryRequest one;
  (*one.mutable_filter()->mutable_fields())["n"] = "3";
  auto got = QueryAll(stub_.get(), one);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].problem().n(), 3);

  v1::QueryRequest page;
  page.set_page_size(2);
  auto first = QueryAll(stub_.get(), page);
  ASSERT_EQ(first.size(), 2u);
  page.set_after_id(first.back().id());
  auto second = QueryAll(stub_.get(), page);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_GT(second[0].id(), first[1].id());

  // By key hash, through the index; other fields still apply.
  v1::QueryRequest by_hash;
  (*by_hash.mutable_filter()->mutable_fields())["hash"] = got[0].key_hash();
  auto hashed = QueryAll(stub_.get(), by_hash);
  ASSERT_EQ(hashed.size(), 1u);
  EXPECT_EQ(hashed[0].id(), got[0].id());
  (*by_hash.mutable_filter()->mutable_fields())["n"] = "4";
  EXPECT_TRUE(QueryAll(stub_.get(), by_hash).empty());

  v1::QueryRequest future;
  future.mutable_filter()->set_since_us(absl::ToUnixMicros(absl::Now()) +
                                        60000000);
  EXPECT_TRUE(QueryAll(stub_.get(), future).empty());

  for (auto [field, value] :
       {std::pair<std::string, std::string>{"colour", "red"},
        {"hash", "not-a-hash"}}) {
    v1::QueryRequest bad;
    (*bad.mutable_filter()->mutable_fields())[field] = value;
    grpc::ClientContext ctx;
    auto reader = stub_->Query(&ctx, bad);
    v1::Record r;
    while (reader->Read(&r)) {
    }
    grpc::Status s = reader->Finish();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << field;
    EXPECT_NE(s.error_message().find(field), std::string::npos)
        << s.error_message();
  }
}

TEST_F(ServiceTest, InvalidateNeedsAFilterOrAll) {
  for (int64_t n = 1; n <= 3; ++n) {
    v1::TuneResponse resp;
    ASSERT_TRUE(Tune(n, &resp).ok());
  }
  {
    grpc::ClientContext ctx;
    v1::InvalidateResponse resp;
    EXPECT_EQ(
        stub_->Invalidate(&ctx, v1::InvalidateRequest(), &resp).error_code(),
        grpc::StatusCode::INVALID_ARGUMENT);
  }
  {
    grpc::ClientContext ctx;
    v1::InvalidateRequest req;
    (*req.mutable_filter()->mutable_fields())["n"] = "2";
    v1::InvalidateResponse resp;
    ASSERT_TRUE(stub_->Invalidate(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.deleted(), 1);
    // Nothing of it is served from memory any more: it is searched again.
    v1::TuneResponse again;
    ASSERT_TRUE(Tune(2, &again).ok());
    EXPECT_TRUE(again.searched());
  }
  {
    grpc::ClientContext ctx;
    v1::InvalidateRequest req;
    req.set_all(true);
    v1::InvalidateResponse resp;
    ASSERT_TRUE(stub_->Invalidate(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.deleted(), 3);
  }
}

TEST_F(ServiceTest, ExportImportRoundTripAndBadFileImportsNothing) {
  std::vector<std::string> lines;
  ASSERT_NO_FATAL_FAILURE(lines = ExportFromAFilledDaemon(4));
  ASSERT_EQ(lines.size(), 4u);
  // A fresh daemon imports them.
  auto import = [&](const std::vector<std::string>& in) {
    grpc::ClientContext ctx;
    v1::ImportResponse resp;
    auto writer = stub_->Import(&ctx, &resp);
    for (const auto& l : in) {
      v1::ImportLine line;
      line.set_json(l);
      EXPECT_TRUE(writer->Write(line));
    }
    writer->WritesDone();
    EXPECT_TRUE(writer->Finish().ok());
    return resp;
  };
  std::vector<std::string> bad = lines;
  bad.insert(bad.begin() + 2, "{\"format\": \"nonsense\"}");
  v1::ImportResponse rejected = import(bad);
  EXPECT_EQ(rejected.imported(), 0);
  ASSERT_EQ(rejected.rejects_size(), 1);
  EXPECT_EQ(rejected.rejects(0).line(), 3);
  EXPECT_TRUE(QueryAll(stub_.get(), v1::QueryRequest()).empty());

  v1::ImportResponse accepted = import(lines);
  EXPECT_EQ(accepted.imported(), 4);
  EXPECT_EQ(accepted.rejects_size(), 0);
  // Imported records answer lookups without searching.
  v1::TuneResponse resp;
  ASSERT_TRUE(Tune(3, &resp).ok());
  EXPECT_FALSE(resp.searched());
}

// A stream that breaks before its end (the client killed, or a line over
// the message size limit) imports nothing, not the lines that arrived.
TEST_F(ServiceTest, ImportStreamThatBreaksBeforeItsEndImportsNothing) {
  std::vector<std::string> lines;
  ASSERT_NO_FATAL_FAILURE(lines = ExportFromAFilledDaemon(3));
  ASSERT_EQ(lines.size(), 3u);
  // Nothing may appear, however long the daemon is given to commit.
  auto expect_nothing_stored = [&](const char* how) {
    for (int i = 0; i < 10; ++i) {
      EXPECT_TRUE(QueryAll(stub_.get(), v1::QueryRequest()).empty()) << how;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  };
  {
    grpc::ClientContext ctx;
    v1::ImportResponse resp;
    auto writer = stub_->Import(&ctx, &resp);
    for (const auto& l : lines) {
      v1::ImportLine line;
      line.set_json(l);
      ASSERT_TRUE(writer->Write(line));
    }
    ctx.TryCancel();  // as if the client died before WritesDone
    EXPECT_FALSE(writer->Finish().ok());
  }
  expect_nothing_stored("after a cancelled stream");
  {
    grpc::ClientContext ctx;
    v1::ImportResponse resp;
    auto writer = stub_->Import(&ctx, &resp);
    v1::ImportLine line;
    line.set_json(lines[0]);
    line.set_expected_lines(2);  // as tunedb import sends it
    ASSERT_TRUE(writer->Write(line));
    line.clear_expected_lines();
    line.set_json(std::string(64 << 20, ' '));  // over the message limit
    writer->Write(line);
    writer->WritesDone();
    EXPECT_FALSE(writer->Finish().ok());
  }
  expect_nothing_stored("after a line over the message limit");
}

// Resident memory of this process, bytes.
int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * 4096;
}

// The daemon stages what arrives: by the last line of a long import it
// holds a batch of records, not all of them.
TEST_F(ServiceTest, ImportHoldsABatchOfRecordsInMemoryNotTheWholeStream) {
  server_->Shutdown(absl::Seconds(1));
  server_.reset();
  StartServer("", dir_.File("tunedb.db"));
  constexpr int kLines = 60000;  // about 70 MiB of JSON lines
  malloc_trim(0);
  const int64_t before = ResidentBytes();
  grpc::ClientContext ctx;
  v1::ImportResponse resp;
  auto writer = stub_->Import(&ctx, &resp);
  for (int n = 1; n <= kLines; ++n) {
    v1::ImportLine line;
    line.set_json(RecordToJson(testing_util::TestRecord(n)));
    if (n == 1) line.set_expected_lines(kLines);
    ASSERT_TRUE(writer->Write(line));
  }
  const int64_t grown = ResidentBytes() - before;
  writer->WritesDone();
  ASSERT_TRUE(writer->Finish().ok());
  EXPECT_EQ(resp.imported(), kLines);
  EXPECT_LT(grown, int64_t{32} << 20);
  EXPECT_EQ(server_->core().store().Count().value_or(-1), kLines);
}

// The line limit is checked on the first line, not after streaming them all.
TEST_F(ServiceTest, ImportOverTheLineLimitIsRefusedOnItsFirstLine) {
  grpc::ClientContext ctx;
  v1::ImportResponse resp;
  auto writer = stub_->Import(&ctx, &resp);
  v1::ImportLine line;
  line.set_json("{}");
  line.set_expected_lines(2'000'000);
  writer->Write(line);
  grpc::Status s = writer->Finish();  // without sending the other lines
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.error_message().find("2000000 lines"), std::string::npos)
      << s.error_message();
  EXPECT_TRUE(QueryAll(stub_.get(), v1::QueryRequest()).empty());
}

TEST_F(ServiceTest, DeadlineIsHonoured) {
  server_->Shutdown(absl::Seconds(1));
  server_.reset();
  StartServer("slow_ms=1000");
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() +
                   std::chrono::milliseconds(100));
  v1::TuneRequest req;
  *req.mutable_problem() = ProtoProblem(8);
  v1::TuneResponse resp;
  auto start = std::chrono::steady_clock::now();
  grpc::Status s = stub_->Tune(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(900));
}

}  // namespace
}  // namespace tunedb
