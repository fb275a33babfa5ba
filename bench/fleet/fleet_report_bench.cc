// The fleet's report (`tunedb report --fleet`, docs/report.md) at scale:
// --records rows of --hosts hosts published to a PostgreSQL fleet database,
// then read as the daemon reads them for the report (FleetReport: the
// fleet's walk, each body parsed, one aggregator), side by side with the
// same records aggregated from memory (the floor) and their bodies parsed
// and aggregated without PostgreSQL (the parse's share), each as a ratio.
//
// PostgreSQL is started in a temporary folder as for the tests
// (tests/testing/postgres_server.h). Usage: tunedb_fleet_report_bench
// [--records 100000] [--hosts 10]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/report_data.h"
#include "server/service/store_report.h"
#include "spdlog/spdlog.h"
#include "store/fleet/fleet_options.h"
#include "store/fleet/fleet_store.h"
#include "store/record_json.h"
#include "tests/testing/postgres_server.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

using Clock = std::chrono::steady_clock;

struct Flags {
  int records = 100000;
  int hosts = 10;
};

// Wall and CPU seconds of one way.
struct Took {
  double wall = 0;
  double cpu = 0;
};

template <class Fn>
Took Time(Fn fn) {
  const Clock::time_point start = Clock::now();
  const std::clock_t cpu = std::clock();
  fn();
  return {std::chrono::duration<double>(Clock::now() - start).count(),
          static_cast<double>(std::clock() - cpu) / CLOCKS_PER_SEC};
}

// The records: each key measured by several hosts, as a fleet holds them.
std::vector<Record> MakeRecords(const Flags& flags) {
  std::vector<Record> records;
  records.reserve(flags.records);
  for (int i = 0; i < flags.records; ++i) {
    Record r = testing_util::TestRecord(1 + i / flags.hosts);
    r.host = absl::StrCat("host-", i % flags.hosts);
    records.push_back(std::move(r));
  }
  return records;
}

// Publishes `records`, 1,000 a transaction.
Took Publish(FleetStore& fleet, const std::vector<Record>& records) {
  return Time([&] {
    for (size_t i = 0; i < records.size(); i += 1000) {
      const size_t end = std::min(records.size(), i + 1000);
      std::vector<Record> batch(records.begin() + i, records.begin() + end);
      if (!fleet.Publish(batch, "bench").ok()) exit(1);
    }
  });
}

void Print(const char* way, const Took& took, const Took& floor) {
  printf("%-44s %8.2f s %8.2f s %8.1fx\n", way, took.wall, took.cpu,
         took.wall / floor.wall);
}

int Main(const Flags& flags) {
  testing_util::TempDir dir;
  testing_util::PostgresServer pg(dir.path());
  std::string error;
  if (!pg.Start(&error)) {
    fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  FleetOptions options;
  options.url = pg.CreateDatabase("report");
  auto fleet = FleetStore::Open(options);
  if (!fleet.ok()) {
    fprintf(stderr, "%s\n", fleet.status().ToString().c_str());
    return 1;
  }
  const std::vector<Record> records = MakeRecords(flags);
  const Took published = Publish(**fleet, records);
  std::vector<std::string> bodies;
  for (const Record& r : records) bodies.push_back(RecordToJson(r));
  const std::string body_bytes = pg.Sql(
      "report", "SELECT ROUND(AVG(LENGTH(body))) FROM fleet_records");
  printf("fleet report of %d records of %d hosts (bodies of %s bytes on "
         "average; published in %.1f s)\n",
         flags.records, flags.hosts, body_bytes.c_str(), published.wall);
  const Took floor = Time([&] {
    ReportAggregator aggregator;
    for (const Record& r : records) aggregator.Add(r);
    aggregator.Finish();
  });
  const Took parsed = Time([&] {
    ReportAggregator aggregator;
    for (const std::string& body : bodies) {
      aggregator.Add(*RecordFromJson(body));
    }
    aggregator.Finish();
  });
  Took read;
  for (int round = 0; round < 3; ++round) {  // the best of three
    const Took took = Time([&] {
      if (!FleetReport(fleet->get(), ReportArgs{}, [] { return false; })
               .ok()) {
        exit(1);
      }
    });
    if (round == 0 || took.wall < read.wall) read = took;
  }
  printf("%-44s %10s %10s %9s\n", "way", "wall", "CPU", "vs floor");
  Print("records aggregated from memory (floor)", floor, floor);
  Print("bodies parsed and aggregated, no PostgreSQL", parsed, floor);
  Print("FleetReport: read from PostgreSQL (best of 3)", read, floor);
  printf("%.1f us of this process's CPU a record through FleetReport\n",
         1e6 * read.cpu / flags.records);
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
    if (name == "--records" && value > 0) {
      flags.records = value;
    } else if (name == "--hosts" && value > 0) {
      flags.hosts = value;
    } else {
      fprintf(stderr, "usage: %s [--records 100000] [--hosts 10]\n", argv[0]);
      return 2;
    }
  }
  return tunedb::Main(flags);
}
