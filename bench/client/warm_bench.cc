// A program's second run: one Warm for all its keys, against one Lookup per
// key (as before Warm), from the same in-process daemon in the same run.
//
// The daemon (simulated finder) tunes N ResNet-50-like keys; a first run of
// the program asks each once by Lookup, naming the program, and the keys
// are flushed to the store. Then, `--rounds` times each, the second run's
// two ways are timed end to end: N Lookups (choice_only, predict, as the
// client sends them), and one Warm with the same flags; and, for the cost
// of remembering, the N Lookups naming the program against the same
// without it. Prints the medians side by side and their ratios, for N = 68
// and 276 (the smallest and largest programs measured on an H200).
//
//   warm_bench [--rounds 5]
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "bench_util.h"
#include "proto/convert.h"
#include "tunedb/v1/tunedb.grpc.pb.h"

namespace tunedb::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kProgram[] = "warm-bench";

double Ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// `count` keys: the ResNet-50 layers of ResNetKeys at batches 1, 2, ...
std::vector<ProblemKey> Keys(const DeviceKey& device, size_t count) {
  std::vector<ProblemKey> keys;
  for (int64_t batch = 1; keys.size() < count; ++batch) {
    for (ProblemKey key : ResNetKeys(device)) {
      if (keys.size() == count) break;
      if (key.problem.n != 32) continue;  // one of its two batches
      key.problem.n = batch;
      keys.push_back(key);
    }
  }
  return keys;
}

v1::LookupRequest RequestFor(const ProblemKey& key, bool with_program) {
  v1::LookupRequest request;
  ToProto(key.problem, request.mutable_problem());
  ToProto(key.device, request.mutable_device());
  request.set_choice_only(true);  // as the client sends them
  request.set_predict(true);
  if (with_program) request.set_program(kProgram);
  return request;
}

// The N Lookups of a run, in ms; exits on a failed call.
double LookupEach(v1::TuneDb::Stub& stub,
                  const std::vector<v1::LookupRequest>& requests) {
  const auto start = Clock::now();
  for (const v1::LookupRequest& request : requests) {
    grpc::ClientContext context;
    v1::LookupResponse response;
    grpc::Status s = stub.Lookup(&context, request, &response);
    if (!s.ok()) {
      fprintf(stderr, "Lookup: %s\n", s.error_message().c_str());
      exit(1);
    }
  }
  return Ms(Clock::now() - start);
}

// One Warm of the program, in ms; `*entries` its entries.
double WarmOnce(v1::TuneDb::Stub& stub, const DeviceKey& device,
                int* entries) {
  v1::WarmRequest request;
  request.set_program(kProgram);
  ToProto(device, request.mutable_device());
  request.set_choice_only(true);
  request.set_predict(true);
  grpc::ClientContext context;
  v1::WarmResponse response;
  const auto start = Clock::now();
  grpc::Status s = stub.Warm(&context, request, &response);
  const double ms = Ms(Clock::now() - start);
  if (!s.ok()) {
    fprintf(stderr, "Warm: %s\n", s.error_message().c_str());
    exit(1);
  }
  *entries = response.entries_size();
  return ms;
}

// Tunes `keys` and has the program ask each once, then times both ways.
void Measure(size_t count, int rounds) {
  std::unique_ptr<Server> server = StartDaemon(MakeTempDir() + "/w.sock");
  auto stub = v1::TuneDb::NewStub(grpc::CreateChannel(
      server->address(), grpc::InsecureChannelCredentials()));
  const DeviceKey device = server->core().devices()[0].key;
  const std::vector<ProblemKey> keys = Keys(device, count);
  std::vector<v1::LookupRequest> first_run, lookups;
  for (const ProblemKey& key : keys) {
    absl::StatusOr<TuneAnswer> tuned =
        server->core().Tune(key.problem, key.device, Constraints{},
                            TuneMode{}, absl::InfiniteFuture());
    if (!tuned.ok()) {
      fprintf(stderr, "Tune: %s\n", tuned.status().ToString().c_str());
      exit(1);
    }
    first_run.push_back(RequestFor(key, true));
    lookups.push_back(RequestFor(key, false));
  }
  LookupEach(*stub, first_run);
  server->core().program_keys().Flush();
  std::vector<double> lookup_ms, named_ms, warm_ms;
  int entries = 0;
  for (int round = 0; round < rounds; ++round) {
    lookup_ms.push_back(LookupEach(*stub, lookups));
    named_ms.push_back(LookupEach(*stub, first_run));
    warm_ms.push_back(WarmOnce(*stub, device, &entries));
  }
  const double lookup = Median(lookup_ms), warm = Median(warm_ms);
  const double named = Median(named_ms);
  printf(
      "%4zu keys: %4zu Lookups %7.2f ms (%.1f us a key) | one Warm %6.2f ms "
      "(%d entries) -> Lookups / Warm = %.1fx\n"
      "           the Lookups naming the program (remembered) %7.2f ms "
      "-> named / plain = %.2fx\n",
      count, lookups.size(), lookup, 1000 * lookup / count, warm, entries,
      warm > 0 ? lookup / warm : 0, named, lookup > 0 ? named / lookup : 0);
  server->Shutdown(absl::Seconds(1));
}

int Main(int argc, char** argv) {
  int rounds = 5;
  if (argc != 1 && !(argc == 3 && std::string(argv[1]) == "--rounds" &&
                     absl::SimpleAtoi(argv[2], &rounds) && rounds >= 1)) {
    fprintf(stderr, "usage: warm_bench [--rounds N], N >= 1\n");
    return 2;
  }
  printf("a program's second run, median of %d rounds (in-process daemon, "
         "simulated finder, Unix socket)\n",
         rounds);
  for (size_t count : {size_t{68}, size_t{276}}) Measure(count, rounds);
  return 0;
}

}  // namespace
}  // namespace tunedb::bench

int main(int argc, char** argv) { return tunedb::bench::Main(argc, argv); }
