// The fleet tier's two speed goals (docs/fleet.md), each printed as a ratio:
//
// 1. Fleet prewarm throughput with 1, 2 and 4 daemons (in process, each with
//    one simulated GPU whose every search takes a fixed --search-ms) sharing
//    one PostgreSQL database: jobs per second against the single daemon's
//    rate times the number of daemons (goal >= 0.9x linear).
// 2. The Lookup hit path over the daemon's Unix socket with --fleet against
//    the same daemon without one (goal <= 1.05x): a hit never asks the fleet.
//
// PostgreSQL is started in a temporary folder as for the tests
// (tests/testing/postgres_server.h). Usage: tunedb_fleet_bench
// [--search-ms 50] [--jobs-per-daemon 60] [--lookups 20000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "proto/convert.h"
#include "server/service/server.h"
#include "spdlog/spdlog.h"
#include "store/fleet/fleet_jobs.h"
#include "tests/testing/postgres_server.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_values.h"
#include "tunedb/v1/tunedb.grpc.pb.h"

namespace tunedb {
namespace {

using Clock = std::chrono::steady_clock;

struct Flags {
  int search_ms = 50;
  int jobs_per_daemon = 60;
  int lookups = 20000;
};

std::unique_ptr<Server> StartServer(const std::string& dir, int index,
                                    const std::string& fleet_url,
                                    int search_ms) {
  ServerOptions options;
  options.unix_socket = absl::StrCat(dir, "/d", index, ".sock");
  options.store.path = absl::StrCat(dir, "/d", index, ".db");
  options.store.synchronous = "NORMAL";
  options.finder = "simulated";
  options.simulated_options = absl::StrCat("slow_ms=", search_ms);
  options.core.host = absl::StrCat("bench-", index);
  options.fleet.url = fleet_url;
  options.fleet_job_runner.idle_poll = absl::Milliseconds(20);
  auto server = Server::BuildAndStart(options);
  if (!server.ok()) {
    fprintf(stderr, "daemon: %s\n", server.status().ToString().c_str());
    exit(1);
  }
  return *std::move(server);
}

// Jobs per second of `daemons` daemons prewarming daemons * per_daemon keys.
double PrewarmRate(testing_util::PostgresServer& pg, int daemons,
                   const Flags& flags) {
  testing_util::TempDir dir;
  const std::string url = pg.CreateDatabase(absl::StrCat("prewarm_", daemons));
  FleetOptions options;
  options.url = url;
  auto jobs = FleetJobs::Open(options);
  if (!jobs.ok()) {
    fprintf(stderr, "%s\n", jobs.status().ToString().c_str());
    exit(1);
  }
  std::vector<std::unique_ptr<Server>> servers;
  for (int i = 0; i < daemons; ++i) {
    servers.push_back(StartServer(dir.path(), i, url, flags.search_ms));
  }
  const int total = daemons * flags.jobs_per_daemon;
  std::vector<ProblemKey> keys;
  for (int n = 1; n <= total; ++n) keys.push_back(testing_util::TestKey(n));
  const Clock::time_point start = Clock::now();
  if (!(*jobs)->Enqueue("bench", keys).ok()) exit(1);
  while (true) {
    auto progress = (*jobs)->Progress("bench");
    if (progress.ok() && progress->done + progress->failed == total) {
      if (progress->failed > 0) fprintf(stderr, "%ld failed\n", progress->failed);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const double seconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  for (auto& s : servers) s->Shutdown(absl::Seconds(5));
  return total / seconds;
}

// Mean µs of a Lookup hit over the server's socket.
double LookupMicros(Server& server, int lookups) {
  auto channel = grpc::CreateChannel(server.address(),
                                     grpc::InsecureChannelCredentials());
  auto stub = v1::TuneDb::NewStub(channel);
  {
    grpc::ClientContext ctx;
    v1::TuneRequest tune;
    ToProto(testing_util::TestProblem(8), tune.mutable_problem());
    v1::TuneResponse response;
    if (!stub->Tune(&ctx, tune, &response).ok()) exit(1);
  }
  v1::LookupRequest request;
  ToProto(testing_util::TestProblem(8), request.mutable_problem());
  ToProto(testing_util::TestDevice(), request.mutable_device());
  request.set_choice_only(true);
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < lookups; ++i) {
    grpc::ClientContext ctx;
    v1::LookupResponse response;
    if (!stub->Lookup(&ctx, request, &response).ok()) exit(1);
  }
  return std::chrono::duration<double, std::micro>(Clock::now() - start)
             .count() /
         lookups;
}

int Main(const Flags& flags) {
  testing_util::TempDir dir;
  testing_util::PostgresServer pg(dir.path());
  std::string error;
  if (!pg.Start(&error)) {
    fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  printf("fleet prewarm: %d jobs per daemon, every search %d ms (simulated), "
         "one GPU per daemon\n",
         flags.jobs_per_daemon, flags.search_ms);
  printf("%-8s %12s %14s %16s\n", "daemons", "jobs/s", "linear jobs/s",
         "vs linear");
  double single = 0;
  for (int daemons : {1, 2, 4}) {
    const double rate = PrewarmRate(pg, daemons, flags);
    if (daemons == 1) single = rate;
    printf("%-8d %12.1f %14.1f %15.3fx\n", daemons, rate, single * daemons,
           rate / (single * daemons));
  }

  printf("\nLookup hit over the Unix socket (%d calls per round, median of "
         "7 rounds, the two daemons taking turns to go first)\n",
         flags.lookups);
  testing_util::TempDir ldir;
  const std::string url = pg.CreateDatabase("lookup");
  auto local = StartServer(ldir.path(), 0, "", flags.search_ms);
  auto fleet = StartServer(ldir.path(), 1, url, flags.search_ms);
  std::vector<double> without, with;
  LookupMicros(*local, flags.lookups / 10);  // warm both up
  LookupMicros(*fleet, flags.lookups / 10);
  for (int round = 0; round < 7; ++round) {
    if (round % 2 == 0) {
      without.push_back(LookupMicros(*local, flags.lookups));
      with.push_back(LookupMicros(*fleet, flags.lookups));
    } else {
      with.push_back(LookupMicros(*fleet, flags.lookups));
      without.push_back(LookupMicros(*local, flags.lookups));
    }
  }
  std::sort(without.begin(), without.end());
  std::sort(with.begin(), with.end());
  printf("%-16s %10.2f us\n", "without --fleet", without[3]);
  printf("%-16s %10.2f us\n", "with --fleet", with[3]);
  printf("%-16s %10.3fx (goal <= 1.05x)\n", "ratio", with[3] / without[3]);
  return 0;
}

}  // namespace
}  // namespace tunedb

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  tunedb::Flags flags;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i];
    const int value = atoi(argv[i + 1]);
    if (name == "--search-ms") {
      flags.search_ms = value;
    } else if (name == "--jobs-per-daemon") {
      flags.jobs_per_daemon = value;
    } else if (name == "--lookups") {
      flags.lookups = value;
    } else {
      fprintf(stderr,
              "usage: %s [--search-ms 50] [--jobs-per-daemon 60] "
              "[--lookups 20000]\n",
              argv[0]);
      return 2;
    }
  }
  return tunedb::Main(flags);
}
