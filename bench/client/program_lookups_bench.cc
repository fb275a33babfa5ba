// A program's first Lookups against a daemon holding real records, against
// an empty gRPC call to the same daemon, in the same run.
//
// A PyTorch program asks the daemon once for each of its keys (hundreds)
// while its first batches wait. This benchmark stores an export file's
// records (e.g. an H200 search's, with their plans) in a daemon's store
// file, starts the in-process daemon on it (simulated finder: nothing is
// searched), and makes, as the preload does (choice_only, predict):
//   - one Lookup for each stored graph key, in file order: a program whose
//     keys are stored;
//   - one Lookup for each of those keys 8 pixels larger (never stored):
//     a program at new input sizes, answered by predictions;
// each as a first pass on a new daemon (nothing cached) and a second pass
// (the daemon's caches warm), with a Health/Check before each Lookup as
// the reference. Prints per-key medians and means, and the totals a
// program would wait.
//
//   program_lookups_bench RECORDS.jsonl [--passes 2]
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "bench/record_file.h"
#include "bench_util.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "proto/convert.h"
#include "store/record_json.h"
#include "store/store.h"
#include "tunedb/v1/tunedb.grpc.pb.h"

namespace tunedb::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Timings {
  std::vector<double> lookup_us, check_us;
  int answered = 0, predicted = 0, failed = 0;
};

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
double Sum(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0);
}
double Mean(const std::vector<double>& v) {
  return v.empty() ? 0 : Sum(v) / static_cast<double>(v.size());
}

double Us(Clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

// The 2-D graph-API records of the export file `path`.
std::vector<Record> GraphRecords(const char* path) {
  std::vector<Record> all, graph;
  int skipped = 0;
  if (!ReadRecordFiles({path}, &all, &skipped)) return graph;
  for (Record& r : all) {
    if (r.key.problem.api == ConvApi::kGraph && r.key.problem.input[2] == 0) {
      graph.push_back(std::move(r));
    }
  }
  return graph;
}

// `records` stored in the store file `db`.
void StoreRecords(const std::string& db, const std::vector<Record>& records) {
  Store::Options options;
  options.path = db;
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(options);
  absl::Status s = store.ok() ? (*store)->PutAll(records) : store.status();
  if (!s.ok()) {
    fprintf(stderr, "storing the records: %s\n", s.ToString().c_str());
    exit(1);
  }
}

v1::LookupRequest RequestFor(const ProblemKey& key) {
  v1::LookupRequest request;
  ToProto(key.problem, request.mutable_problem());
  ToProto(key.device, request.mutable_device());
  request.mutable_constraints();
  request.set_choice_only(true);  // as the client sends them
  request.set_predict(true);
  return request;
}

Timings Pass(const std::vector<v1::LookupRequest>& requests,
             v1::TuneDb::Stub& stub, grpc::health::v1::Health::Stub& health) {
  Timings t;
  for (const v1::LookupRequest& request : requests) {
    {
      grpc::ClientContext context;
      grpc::health::v1::HealthCheckRequest in;
      grpc::health::v1::HealthCheckResponse out;
      const auto start = Clock::now();
      health.Check(&context, in, &out);
      t.check_us.push_back(Us(Clock::now() - start));
    }
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(5));
    v1::LookupResponse response;
    const auto start = Clock::now();
    grpc::Status s = stub.Lookup(&context, request, &response);
    const double us = Us(Clock::now() - start);
    // A miss without a prediction is NOT_FOUND, an answer too.
    if (!s.ok() && s.error_code() != grpc::StatusCode::NOT_FOUND) {
      ++t.failed;
      continue;
    }
    t.lookup_us.push_back(us);
    t.answered += s.ok() && response.has_choice();
    t.predicted += s.ok() && response.has_prediction();
  }
  return t;
}

void Print(const char* what, int pass, const Timings& t) {
  const double lookup = Median(t.lookup_us), check = Median(t.check_us);
  printf(
      "  %-22s pass %d: %4zu keys (%d answered, %d predicted, %d failed): "
      "Lookup median "
      "%7.1f us, mean %7.1f us, total %7.1f ms; Check median %5.1f us -> "
      "%.2fx (mean %.2fx)\n",
      what, pass, t.lookup_us.size(), t.answered, t.predicted, t.failed,
      lookup,
      Mean(t.lookup_us), Sum(t.lookup_us) / 1000, check,
      check > 0 ? lookup / check : 0,
      check > 0 ? Mean(t.lookup_us) / Mean(t.check_us) : 0);
}

int Main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" ||
      std::string(argv[1]) == "-h") {
    printf(
        "usage: program_lookups_bench RECORDS.jsonl [--passes N]\n"
        "A program's first Lookups (stored keys, and the same keys 8 pixels "
        "larger, predicted) against a daemon holding RECORDS (an export "
        "file), against an empty Health/Check.\n");
    return argc < 2 ? 2 : 0;
  }
  int passes = 2;
  if (argc != 2 && !(argc == 4 && std::string(argv[2]) == "--passes" &&
                     absl::SimpleAtoi(argv[3], &passes) && passes >= 1)) {
    fprintf(stderr, "usage: program_lookups_bench RECORDS.jsonl "
                    "[--passes N], N >= 1\n");
    return 2;
  }
  const std::vector<Record> records = GraphRecords(argv[1]);
  if (records.empty()) {
    fprintf(stderr, "no 2-D graph-API records in %s\n", argv[1]);
    return 1;
  }
  std::vector<v1::LookupRequest> stored, unseen;
  for (const Record& r : records) {
    stored.push_back(RequestFor(r.key));
    ProblemKey bigger = r.key;
    bigger.problem.input[0] += 8;
    bigger.problem.input[1] += 8;
    unseen.push_back(RequestFor(bigger));
  }
  printf("%zu graph records of %s\n", records.size(), argv[1]);
  for (const auto& [what, requests] :
       {std::pair{"stored keys", &stored}, std::pair{"unseen, predicted", &unseen}}) {
    std::unique_ptr<Server> server = StartDaemon(
        MakeTempDir() + "/p.sock",
        [&](const std::string& db) { StoreRecords(db, records); });
    std::shared_ptr<grpc::Channel> channel = grpc::CreateChannel(
        server->address(), grpc::InsecureChannelCredentials());
    auto stub = v1::TuneDb::NewStub(channel);
    auto health = grpc::health::v1::Health::NewStub(channel);
    for (int pass = 1; pass <= passes; ++pass) {
      Print(what, pass, Pass(*requests, *stub, *health));
    }
    server->Shutdown(absl::Seconds(1));
  }
  return 0;
}

}  // namespace
}  // namespace tunedb::bench

int main(int argc, char** argv) { return tunedb::bench::Main(argc, argv); }
