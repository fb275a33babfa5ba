// Miss path of tunedb::Client::Get through the real daemon, against an
// empty unary gRPC call to the same daemon, in the same run.
//
// The daemon runs in process (simulated finder, a store file as a real
// daemon has) on a Unix socket, with the records already stored. The
// client's cache is disabled,
// so every Get is one Lookup rpc (request built from the key, the daemon's
// store read, the answer converted back). The reference is
// grpc.health.v1.Health/Check on a channel with the client's channel
// arguments (gRPC's global subchannel pool gives both the same connection).
// Goal: Get's median latency <= 1.3x the Check's.
//
// A third benchmark makes the same Lookup rpc through the generated stub
// with requests built beforehand: Get against it is the client's own cost
// (conversions, policy, counters); it against the Check is the daemon's
// Lookup work (parsing, the store read, the record in the response).
//
// Two more time Lookups of keys never stored (NOT_FOUND), asking for the
// problem under other cuDNN versions (the client's default on a miss) and
// not: what that store read adds to a daemon miss. A last one asks for a
// prediction from the nearest tuned shapes (the preload's default; the
// same layer at batch 32 is 0.69 away), answered with one: what a
// predicted answer costs (its family read from the store once, then kept
// a few seconds).
//
// The NOT_FOUND path's breakdown: the daemon's own Lookup decision timed
// without gRPC (TuningCore::Lookup of a stored key and of one not stored),
// the error status built and converted for gRPC, and the empty call again
// answered with an error status (Check of a service the daemon does not
// know: NOT_FOUND with a message): what gRPC's error path costs by itself.
#include <benchmark/benchmark.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <vector>

#include "absl/time/clock.h"
#include "bench_util.h"
#include "client/answer_cache.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "common/valid_key.h"
#include "proto/convert.h"
#include "proto/grpc_status.h"
#include "tunedb/client.h"
#include "tunedb/v1/tunedb.grpc.pb.h"

namespace tunedb::bench {
namespace {

struct World {
  std::unique_ptr<Server> server;
  std::vector<ProblemKey> keys;
  std::unique_ptr<Client> client;
  std::unique_ptr<grpc::health::v1::Health::Stub> health;
  std::unique_ptr<v1::TuneDb::Stub> stub;
  std::vector<v1::LookupRequest> requests;
  // Keys never stored (batch 16), with and without
  // predict_from_other_versions.
  std::vector<v1::LookupRequest> not_stored_other_versions;
  std::vector<v1::LookupRequest> not_stored;
  // The same keys asking for a miss as OK (miss_as_ok), as the client asks.
  std::vector<v1::LookupRequest> not_stored_as_ok;
  // The same, asking for a prediction from nearby shapes.
  std::vector<v1::LookupRequest> predicted;
  // Requests the daemon refuses before any store read (a batch of -1).
  std::vector<v1::LookupRequest> invalid;
  // The stored keys and the same keys never stored, for the core itself.
  std::vector<ValidKey> stored_keys;
  std::vector<ValidKey> not_stored_keys;
};
World* world = nullptr;

using Clock = std::chrono::steady_clock;

// The CPU time this process has used (client, daemon and gRPC's threads
// together), in microseconds: what a call costs, whatever else the host runs.
double ProcessCpuMicros() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

// Records per-iteration latency; sets p50/p90 counters in microseconds, and
// cpu_us: the process's CPU time per iteration.
class Latencies {
 public:
  explicit Latencies(benchmark::State& state)
      : state_(state), cpu_start_(ProcessCpuMicros()) {
    samples_.reserve(1 << 16);
  }
  void Add(Clock::duration d) {
    samples_.push_back(std::chrono::duration<double, std::micro>(d).count());
  }
  ~Latencies() {
    if (samples_.empty()) return;
    state_.counters["cpu_us"] =
        (ProcessCpuMicros() - cpu_start_) / samples_.size();
    std::sort(samples_.begin(), samples_.end());
    state_.counters["p50_us"] = samples_[samples_.size() / 2];
    state_.counters["p90_us"] = samples_[samples_.size() * 9 / 10];
  }

 private:
  benchmark::State& state_;
  const double cpu_start_;
  std::vector<double> samples_;
};

void BM_ClientGetMiss(benchmark::State& state) {
  Client& client = *world->client;
  const std::vector<ProblemKey>& keys = world->keys;
  size_t i = 0;
  int64_t wrong = 0;
  {
    Latencies lat(state);
    for (auto _ : state) {
      const auto start = Clock::now();
      Answer a = client.Get(keys[i++ % keys.size()]);
      lat.Add(Clock::now() - start);
      wrong += a.source != Source::kDaemon;
    }
  }
  if (wrong != 0) state.SkipWithError("a Get was not answered by the daemon");
}

// Health checks of `service`, each answered `code`.
void HealthChecks(benchmark::State& state, const std::string& service,
                  grpc::StatusCode code) {
  int64_t wrong = 0;
  {
    Latencies lat(state);
    for (auto _ : state) {
      const auto start = Clock::now();
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() +
                           std::chrono::seconds(1));
      grpc::health::v1::HealthCheckRequest request;
      request.set_service(service);
      grpc::health::v1::HealthCheckResponse response;
      grpc::Status s = world->health->Check(&context, request, &response);
      lat.Add(Clock::now() - start);
      wrong += s.error_code() != code;
    }
  }
  if (wrong != 0) state.SkipWithError("a health check was not answered so");
}

void BM_HealthCheck(benchmark::State& state) {
  HealthChecks(state, "", grpc::StatusCode::OK);
}

// A Lookup's miss: NOT_FOUND, or OK with not_stored (miss_as_ok).
bool IsMiss(const grpc::Status& s, const v1::LookupResponse& response) {
  return s.error_code() == grpc::StatusCode::NOT_FOUND ||
         (s.ok() && response.not_stored());
}

// How a Lookup of a benchmark must be answered.
enum class Expect { kChoice, kMiss, kInvalid };

bool Answered(Expect expect, const grpc::Status& s,
              const v1::LookupResponse& response) {
  switch (expect) {
    case Expect::kChoice:
      return s.ok() && response.has_choice();
    case Expect::kMiss:
      return IsMiss(s, response);
    case Expect::kInvalid:
      return s.error_code() == grpc::StatusCode::INVALID_ARGUMENT;
  }
  return false;
}

// Lookups through the generated stub, `requests` in turn, each answered as
// `expect` says.
void RawLookups(benchmark::State& state,
                const std::vector<v1::LookupRequest>& requests,
                Expect expect) {
  size_t i = 0;
  int64_t wrong = 0;
  {
    Latencies lat(state);
    for (auto _ : state) {
      const auto start = Clock::now();
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() +
                           std::chrono::seconds(1));
      v1::LookupResponse response;
      grpc::Status s = world->stub->Lookup(
          &context, requests[i++ % requests.size()], &response);
      lat.Add(Clock::now() - start);
      wrong += !Answered(expect, s, response);
    }
  }
  if (wrong != 0) state.SkipWithError("a Lookup was not answered as expected");
}

void BM_RawLookupStub(benchmark::State& state) {
  RawLookups(state, world->requests, Expect::kChoice);
}

// A Lookup of a key the daemon has not stored, answered NOT_FOUND: with
// predict_from_other_versions (the client's default on a miss) the daemon
// also reads the store for the problem under other cuDNN versions.
void BM_RawLookupNotStoredAskingOtherVersions(benchmark::State& state) {
  RawLookups(state, world->not_stored_other_versions, Expect::kMiss);
}

void BM_RawLookupNotStored(benchmark::State& state) {
  RawLookups(state, world->not_stored, Expect::kMiss);
}

// The same keys, the miss answered OK (LookupRequest.miss_as_ok), as the
// client asks since: no error status on either end.
void BM_RawLookupNotStoredAsOk(benchmark::State& state) {
  RawLookups(state, world->not_stored_as_ok, Expect::kMiss);
}

void BM_RawLookupPredicted(benchmark::State& state) {
  RawLookups(state, world->predicted, Expect::kChoice);
}

// A Lookup refused at once (INVALID_ARGUMENT): the daemon's error path
// without the core.
void BM_RawLookupInvalid(benchmark::State& state) {
  RawLookups(state, world->invalid, Expect::kInvalid);
}

// The empty call answered NOT_FOUND (a service name the daemon's health
// service does not know): gRPC's error path against its OK path.
void BM_HealthCheckNotFound(benchmark::State& state) {
  HealthChecks(state, "no.such.Service", grpc::StatusCode::NOT_FOUND);
}

// The daemon's Lookup decision alone, no gRPC: `keys` in turn, each found
// or not as `found` says.
void CoreLookups(benchmark::State& state, const std::vector<ValidKey>& keys,
                 bool found) {
  TuningCore& core = world->server->core();
  const Constraints constraints;
  size_t i = 0;
  int64_t wrong = 0;
  {
    Latencies lat(state);
    for (auto _ : state) {
      const auto start = Clock::now();
      absl::StatusOr<LookupAnswer> answer =
          core.Lookup(keys[i++ % keys.size()], constraints, std::nullopt);
      lat.Add(Clock::now() - start);
      wrong += found ? !answer.ok() : !absl::IsNotFound(answer.status());
    }
  }
  if (wrong != 0) state.SkipWithError("a core Lookup answered otherwise");
}

void BM_CoreLookupStored(benchmark::State& state) {
  CoreLookups(state, world->stored_keys, /*found=*/true);
}

void BM_CoreLookupNotStored(benchmark::State& state) {
  CoreLookups(state, world->not_stored_keys, /*found=*/false);
}

// The miss's status as the service answers it: made, then converted.
void BM_NotFoundStatusToGrpc(benchmark::State& state) {
  const ValidKey& key = world->not_stored_keys.front();
  Latencies lat(state);
  for (auto _ : state) {
    const auto start = Clock::now();
    grpc::Status s = ToGrpcStatus(
        absl::NotFoundError(absl::StrCat("no record for key ", key.HashText())));
    benchmark::DoNotOptimize(s);
    lat.Add(Clock::now() - start);
  }
}

// Five repetitions each, randomly interleaved (see main) so that drift
// affects both alike.
BENCHMARK(BM_ClientGetMiss)->Repetitions(5)->UseRealTime()->MinTime(0.5);
BENCHMARK(BM_HealthCheck)->Repetitions(5)->UseRealTime()->MinTime(0.5);
BENCHMARK(BM_RawLookupStub)->Repetitions(5)->UseRealTime()->MinTime(0.5);
BENCHMARK(BM_RawLookupNotStoredAskingOtherVersions)
    ->Repetitions(5)
    ->UseRealTime()
    ->MinTime(0.5);
BENCHMARK(BM_RawLookupNotStored)->Repetitions(5)->UseRealTime()->MinTime(0.5);
BENCHMARK(BM_RawLookupNotStoredAsOk)
    ->Repetitions(5)
    ->UseRealTime()
    ->MinTime(0.5);
BENCHMARK(BM_RawLookupPredicted)->Repetitions(5)->UseRealTime()->MinTime(0.5);
BENCHMARK(BM_RawLookupInvalid)->Repetitions(5)->UseRealTime()->MinTime(0.5);
BENCHMARK(BM_HealthCheckNotFound)->Repetitions(5)->UseRealTime()->MinTime(0.5);
BENCHMARK(BM_CoreLookupStored)->Repetitions(5)->UseRealTime()->MinTime(0.2);
BENCHMARK(BM_CoreLookupNotStored)->Repetitions(5)->UseRealTime()->MinTime(0.2);
BENCHMARK(BM_NotFoundStatusToGrpc)->Repetitions(5)->UseRealTime()->MinTime(0.2);

void SetUp() {
  world = new World();
  const std::string dir = MakeTempDir();
  world->server = StartDaemon(dir + "/miss.sock");
  world->keys = ResNetKeys(world->server->core().devices().at(0).key);
  ClientOptions options;
  options.address = world->server->address();
  options.miss_policy = MissPolicy::kTuneAndWait;
  options.tune_deadline = absl::Seconds(60);
  // Store every record first (Tune), then measure with the cache off.
  {
    std::unique_ptr<Client> tuner = Client::Create(options).value();
    for (const ProblemKey& key : world->keys) {
      if (tuner->Get(key).source != Source::kDaemon) {
        fprintf(stderr, "could not tune %s\n", key.ToText().c_str());
        exit(1);
      }
    }
  }
  options.miss_policy = MissPolicy::kBackground;
  options.cache_capacity = 0;
  options.lookup_deadline = absl::Seconds(1);
  world->client = Client::Create(options).value();
  // The client's channel arguments (see client/daemon_link.cc).
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 10000);
  std::shared_ptr<grpc::Channel> channel = grpc::CreateCustomChannel(
      options.address, grpc::InsecureChannelCredentials(), args);
  world->health = grpc::health::v1::Health::NewStub(channel);
  world->stub = v1::TuneDb::NewStub(channel);
  for (const ProblemKey& key : world->keys) {
    v1::LookupRequest request;
    ToProto(key.problem, request.mutable_problem());
    ToProto(key.device, request.mutable_device());
    request.mutable_constraints();
    request.set_choice_only(true);  // as the client sends it
    world->requests.push_back(request);
    request.mutable_problem()->set_n(16);  // never stored
    world->not_stored.push_back(request);
    request.set_miss_as_ok(true);
    world->not_stored_as_ok.push_back(request);
    request.set_miss_as_ok(false);
    request.set_predict_from_other_versions(true);
    world->not_stored_other_versions.push_back(request);
    request.set_predict_from_other_versions(false);
    request.set_predict(true);
    world->predicted.push_back(request);
    request.set_predict(false);
    request.mutable_problem()->set_n(-1);
    world->invalid.push_back(request);
    ProblemKey not_stored = key;
    not_stored.problem.n = 16;
    world->stored_keys.push_back(ValidKey::Make(key).value());
    world->not_stored_keys.push_back(ValidKey::Make(not_stored).value());
  }
}

// What one read of each clock the miss path uses costs on this host: the
// client reads absl::Now twice a daemon call (its wait) and CoarseNowMs
// once, gRPC the system clock for the deadline. A clock that traps to the
// kernel (a virtual machine's) would show here.
template <typename Read>
double NanosPerRead(Read read) {
  constexpr int kReads = 1 << 20;
  int64_t sink = 0;
  const auto start = Clock::now();
  for (int i = 0; i < kReads; ++i) sink += read();
  const double ns =
      std::chrono::duration<double, std::nano>(Clock::now() - start).count();
  benchmark::DoNotOptimize(sink);
  return ns / kReads;
}

void PrintClockReads() {
  const double absl_now =
      NanosPerRead([] { return absl::ToUnixNanos(absl::Now()); });
  const double system = NanosPerRead([] {
    return std::chrono::system_clock::now().time_since_epoch().count();
  });
  const double steady = NanosPerRead(
      [] { return Clock::now().time_since_epoch().count(); });
  const double coarse = NanosPerRead([] { return CoarseNowMs(); });
  printf(
      "  clock reads on this host: absl::Now %.0f ns, system_clock %.0f ns, "
      "steady_clock %.0f ns, CoarseNowMs %.0f ns\n",
      absl_now, system, steady, coarse);
}

// Median over repetitions of `name`'s per-repetition p50, in us.
double MedianP50(const KeepingReporter& reporter, const std::string& name) {
  return reporter.Counter(reporter.NameLike(name, "_median"), "p50_us");
}

// Where a NOT_FOUND Lookup's time goes, each part against the Check.
void PrintNotFoundBreakdown(const KeepingReporter& reporter) {
  const double check = MedianP50(reporter, "BM_HealthCheck/");
  const double check_nf = MedianP50(reporter, "BM_HealthCheckNotFound");
  const double stored = MedianP50(reporter, "BM_RawLookupStub");
  const double not_stored = MedianP50(reporter, "BM_RawLookupNotStored/");
  const double core_hit = MedianP50(reporter, "BM_CoreLookupStored");
  const double core_miss = MedianP50(reporter, "BM_CoreLookupNotStored");
  const double status = MedianP50(reporter, "BM_NotFoundStatusToGrpc");
  const double as_ok = MedianP50(reporter, "BM_RawLookupNotStoredAsOk");
  if (check <= 0 || check_nf <= 0 || stored <= 0 || not_stored <= 0) return;
  if (as_ok > 0) {
    printf(
        "  a key not stored, the miss answered OK (miss_as_ok, the client's "
        "way): %.1f us = %.2fx Check (target <= 1.2x); answered NOT_FOUND "
        "%.2fx\n",
        as_ok, as_ok / check, not_stored / check);
  }
  printf(
      "  NOT_FOUND breakdown: a key not stored %.1f us (%.2fx Check), a "
      "stored key %.1f us (%.2fx); the empty call answered NOT_FOUND %.1f "
      "us (%.2fx Check: gRPC's error path); the core's decision alone: "
      "stored %.2f us, not stored %.2f us; the status made and converted "
      "%.2f us\n",
      not_stored, not_stored / check, stored, stored / check, check_nf,
      check_nf / check, core_hit, core_miss, status);
}

}  // namespace
}  // namespace tunedb::bench

int main(int argc, char** argv) {
  using tunedb::bench::KeepingReporter;
  std::vector<char*> args(argv, argv + argc);
  char interleave[] = "--benchmark_enable_random_interleaving=true";
  args.insert(args.begin() + 1, interleave);
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  tunedb::bench::SetUp();
  KeepingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  // Median over repetitions of each repetition's median latency.
  const double get_p50 = reporter.Counter(
      reporter.NameLike("BM_ClientGetMiss", "_median"), "p50_us");
  const double check_p50 = reporter.Counter(
      reporter.NameLike("BM_HealthCheck", "_median"), "p50_us");
  const double raw_p50 = reporter.Counter(
      reporter.NameLike("BM_RawLookupStub", "_median"), "p50_us");
  if (get_p50 <= 0 || check_p50 <= 0) {
    fprintf(stderr, "missing runs; nothing to compare\n");
    return 1;
  }
  printf("\nSummary (same run):\n");
  printf(
      "  miss Get via daemon Lookup p50 %.1f us, empty Health/Check p50 "
      "%.1f us -> %.2fx (goal <= 1.3x: %s)\n",
      get_p50, check_p50, get_p50 / check_p50,
      get_p50 / check_p50 <= 1.3 ? "met" : "NOT met");
  if (raw_p50 > 0) {
    printf(
        "  breakdown: the same Lookup via the raw stub p50 %.1f us: client "
        "overhead %.2fx (Get / raw), daemon Lookup work %.2fx (raw / "
        "Check)\n",
        raw_p50, get_p50 / raw_p50, raw_p50 / check_p50);
  }
  const double asking_p50 = reporter.Counter(
      reporter.NameLike("BM_RawLookupNotStoredAskingOtherVersions", "_median"),
      "p50_us");
  const double plain_p50 = reporter.Counter(
      reporter.NameLike("BM_RawLookupNotStored/", "_median"), "p50_us");
  if (asking_p50 > 0 && plain_p50 > 0) {
    printf(
        "  a key not stored (NOT_FOUND), raw stub: asking for other cuDNN "
        "versions' records (the client's default) p50 %.1f us, not asking "
        "p50 %.1f us -> %.2fx; against Check %.2fx and %.2fx\n",
        asking_p50, plain_p50, asking_p50 / plain_p50, asking_p50 / check_p50,
        plain_p50 / check_p50);
  }
  const double predicted_p50 = reporter.Counter(
      reporter.NameLike("BM_RawLookupPredicted", "_median"), "p50_us");
  if (predicted_p50 > 0 && plain_p50 > 0) {
    printf(
        "  a key not stored, predicted from nearby shapes (the preload's "
        "default), raw stub: p50 %.1f us -> %.2fx not asking; against Check "
        "%.2fx\n",
        predicted_p50, predicted_p50 / plain_p50, predicted_p50 / check_p50);
  }
  tunedb::bench::PrintNotFoundBreakdown(reporter);
  tunedb::bench::PrintClockReads();
  tunedb::bench::world->client.reset();
  tunedb::bench::world->server->Shutdown(absl::Seconds(1));
  benchmark::Shutdown();
  return 0;
}
