// Helpers for the client suites on top of tunedb_testing: FakeTuneDb, a
// small in-test tunedb.v1.TuneDb service whose answers and delays the test
// controls and whose calls it counts.
#ifndef TUNEDB_TESTS_CLIENT_CLIENT_TEST_UTIL_H_
#define TUNEDB_TESTS_CLIENT_CLIENT_TEST_UTIL_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "proto/convert.h"
#include "proto/grpc_status.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_values.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"
#include "tunedb/v1/tunedb.grpc.pb.h"

namespace tunedb::client_test {

// The client suites' names for the shared ones (cudnn_helpers_test.cc uses
// client_test::TempDir).
using testing_util::OkResult;
using testing_util::TempDir;

// Milliseconds since `start` on the steady clock.
inline double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

// The fake daemon. Records are keyed by ProblemKey::ToText(); the choice is
// Choose(record, constraints). Tune stores `tune_result(key)` (after
// sleeping `tune_delay`) unless a record exists.
class FakeTuneDb final : public v1::TuneDb::Service {
 public:
  void Put(const ProblemKey& key, std::vector<AlgoResult> results,
           int64_t measured_at_us = 1000) {
    std::lock_guard<std::mutex> lock(mu_);
    Record& r = records_[key.ToText()];
    r.key = key;
    r.results = std::move(results);
    r.measured_at_us = measured_at_us;
    r.finder = "fake";
  }
  void set_tune_delay(std::chrono::milliseconds d) { tune_delay_ = d; }
  void set_lookup_delay(std::chrono::milliseconds d) { lookup_delay_ = d; }
  // What Tune stores for a key without a record; nullopt: FAILED_PRECONDITION.
  void set_tune_result(
      std::function<std::optional<std::vector<AlgoResult>>(const ProblemKey&)>
          f) {
    std::lock_guard<std::mutex> lock(mu_);
    tune_result_ = std::move(f);
  }

  int lookups() const { return lookups_.load(); }
  int tunes() const { return tunes_.load(); }
  // The job id the last Lookup carried ("" for none).
  std::string last_job() const {
    std::lock_guard<std::mutex> lock(mu_);
    return last_job_;
  }
  // The program the last Lookup named ("" for none).
  std::string last_program() const {
    std::lock_guard<std::mutex> lock(mu_);
    return last_program_;
  }

  grpc::Status Lookup(grpc::ServerContext* context,
                      const v1::LookupRequest* request,
                      v1::LookupResponse* response) override {
    ++lookups_;
    Sleep(context, lookup_delay_);
    absl::StatusOr<ProblemKey> key =
        KeyOf(request->problem(), request->device());
    if (!key.ok()) return ToGrpcStatus(key.status());
    std::lock_guard<std::mutex> lock(mu_);
    last_job_ = request->job();
    last_program_ = request->program();
    auto it = records_.find(key->ToText());
    if (it == records_.end()) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "no record");
    }
    Answer(it->second, request->constraints(), response);
    // As tunedbd answers: the id and time always, the record unless the
    // client asked for the choice only.
    response->set_record_id(response->record().id());
    response->set_measured_at_us(response->record().measured_at_us());
    if (request->choice_only()) response->clear_record();
    return grpc::Status::OK;
  }

  grpc::Status Tune(grpc::ServerContext* context,
                    const v1::TuneRequest* request,
                    v1::TuneResponse* response) override {
    ++tunes_;
    absl::StatusOr<ProblemKey> key =
        KeyOf(request->problem(), request->device());
    if (!key.ok()) return ToGrpcStatus(key.status());
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = records_.find(key->ToText());
      if (it != records_.end()) {
        Answer(it->second, request->constraints(), response);
        return grpc::Status::OK;
      }
    }
    if (!Sleep(context, tune_delay_)) {
      return grpc::Status(grpc::StatusCode::CANCELLED, "caller went away");
    }
    std::lock_guard<std::mutex> lock(mu_);
    std::optional<std::vector<AlgoResult>> results =
        tune_result_ ? tune_result_(*key)
                     : std::vector<AlgoResult>{OkResult(1)};
    if (!results.has_value()) {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          "no such GPU here");
    }
    Record& r = records_[key->ToText()];
    r.key = *key;
    r.results = *results;
    r.measured_at_us = 1000;
    Answer(r, request->constraints(), response);
    response->set_searched(true);
    return grpc::Status::OK;
  }

  // Answer every other rpc (Warm included) as unimplemented (the default).

 private:
  template <typename Response>
  static void Answer(const Record& r, const v1::Constraints& pc,
                     Response* response) {
    ToProto(r, response->mutable_record());
    absl::StatusOr<Constraints> c = FromProto(pc);
    std::optional<AlgoResult> choice = Choose(r, c.ok() ? *c : Constraints{});
    if (choice.has_value()) {
      ToProto(*choice, response->mutable_choice()->mutable_algo());
    }
  }
  static absl::StatusOr<ProblemKey> KeyOf(const v1::ConvProblem& p,
                                          const v1::DeviceKey& d) {
    ProblemKey key;
    absl::StatusOr<ConvProblem> problem = FromProto(p);
    if (!problem.ok()) return problem.status();
    absl::StatusOr<DeviceKey> device = FromProto(d);
    if (!device.ok()) return device.status();
    key.problem = *problem;
    key.device = *device;
    return key;
  }
  // Sleeps, or returns false early if the call is cancelled.
  static bool Sleep(grpc::ServerContext* context, std::chrono::milliseconds d) {
    auto until = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < until) {
      if (context->IsCancelled()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
  }

  mutable std::mutex mu_;
  std::map<std::string, Record> records_;
  std::string last_job_;
  std::string last_program_;
  std::function<std::optional<std::vector<AlgoResult>>(const ProblemKey&)>
      tune_result_;
  std::atomic<std::chrono::milliseconds> tune_delay_{
      std::chrono::milliseconds(0)};
  std::atomic<std::chrono::milliseconds> lookup_delay_{
      std::chrono::milliseconds(0)};
  std::atomic<int> lookups_{0};
  std::atomic<int> tunes_{0};
};

// FakeTuneDb served on a Unix socket.
class FakeDaemon {
 public:
  explicit FakeDaemon(const std::string& socket_path)
      : address_("unix:" + socket_path) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort(address_, grpc::InsecureServerCredentials());
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
  }
  ~FakeDaemon() { Stop(); }
  void Stop() {
    if (server_) {
      server_->Shutdown(std::chrono::system_clock::now() +
                        std::chrono::milliseconds(200));
      server_.reset();
    }
  }
  bool ok() const { return server_ != nullptr; }
  const std::string& address() const { return address_; }
  FakeTuneDb& service() { return service_; }

 private:
  std::string address_;
  FakeTuneDb service_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace tunedb::client_test

#endif  // TUNEDB_TESTS_CLIENT_CLIENT_TEST_UTIL_H_
