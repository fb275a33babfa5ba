// The fleet's report (`tunedb report --fleet`, docs/report.md): two tunedbd
// processes on one real PostgreSQL fleet database, the report asked of one
// of them counting both hosts' records; the fleet's read made for it
// (FleetStore::ReportWalk) in batches, with a damaged row; a daemon without
// a fleet database, and a fleet that cannot be reached.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "store/fleet/fleet_options.h"
#include "store/fleet/fleet_store.h"
#include "tests/server/daemon_process.h"
#include "tests/testing/postgres_test.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

using testing_util::DaemonProcess;
using testing_util::RunToExit;
using testing_util::TempDir;
using testing_util::TestRecord;
using json = nlohmann::json;

std::string Cli(const DaemonProcess& d) {
  return absl::StrCat(TUNEDB_CLI_PATH, " --address unix:", d.socket());
}

// `tunedb report --json ARGS` of daemon `d`, parsed; its exit code in
// *code.
json ReportOf(const DaemonProcess& d, const std::string& args, int* code) {
  const std::string out =
      RunToExit(absl::StrCat(Cli(d), " report --json ", args), code);
  return json::parse(out, nullptr, /*allow_exceptions=*/false);
}

// The Report rpc of `stub`, for the fleet or its own store.
grpc::Status AskReport(v1::TuneDb::Stub* stub, bool fleet,
                       v1::ReportResponse* response) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() +
                   std::chrono::seconds(30));
  v1::ReportRequest request;
  request.set_fleet(fleet);
  return stub->Report(&ctx, request, response);
}

double SearchMs(const json& report) {
  double sum = 0;
  for (const json& g : report["groups"]) sum += g["search_ms"].get<double>();
  return sum;
}

class FleetReportTest : public testing_util::PostgresTest {
 protected:
  // A daemon on the fleet under host name `host` (simulated searches).
  std::unique_ptr<DaemonProcess> Daemon(const TempDir& dir,
                                        const std::string& host) {
    return std::make_unique<DaemonProcess>(
        dir, std::vector<std::string>{"--finder", "simulated", "--host-name",
                                      host, "--fleet", url_});
  }

  // Waits up to 20 s until the fleet holds `rows` records.
  bool FleetHolds(int64_t rows) {
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < until) {
      if (SqlInt("SELECT COUNT(*) FROM fleet_records") == rows) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
};

TEST_F(FleetReportTest, OneDaemonsFleetReportCountsBothHostsRecordsAndSumsTheirFigures) {
  TempDir da, db;
  auto a = Daemon(da, "host-a");
  auto b = Daemon(db, "host-b");
  auto sa = a->Connect(), sb = b->Connect();
  v1::TuneResponse tuned;
  for (int64_t n : {1, 2, 3}) {
    ASSERT_TRUE(testing_util::Tune(sa.get(), n, &tuned).ok());
  }
  for (int64_t n : {11, 12, 13, 14}) {
    ASSERT_TRUE(testing_util::Tune(sb.get(), n, &tuned).ok());
  }
  ASSERT_TRUE(FleetHolds(7));

  int code = -1;
  const json own_a = ReportOf(*a, "", &code);
  ASSERT_EQ(code, 0);
  const json own_b = ReportOf(*b, "", &code);
  ASSERT_EQ(code, 0);
  const json fleet = ReportOf(*a, "--fleet", &code);
  ASSERT_EQ(code, 0) << fleet.dump();
  EXPECT_FALSE(own_a.contains("fleet"));
  EXPECT_EQ(fleet["fleet"], absl::StrCat("postgresql://tunedb@127.0.0.1:",
                                         server()->port(), "/", db_));
  EXPECT_EQ(fleet["hosts"],
            json::parse(R"([{"host": "host-a", "records": 3},
                            {"host": "host-b", "records": 4}])"));
  EXPECT_EQ(fleet["records"], 7);
  EXPECT_EQ(fleet["records"], own_a["records"].get<int64_t>() +
                                  own_b["records"].get<int64_t>());
  EXPECT_EQ(fleet["unreadable"], 0);
  // The figures the fleet holds are the sum of the two daemons' own.
  EXPECT_NEAR(SearchMs(fleet), SearchMs(own_a) + SearchMs(own_b), 1e-6);
  EXPECT_GT(SearchMs(fleet), 0);
  for (size_t i = 0; i < fleet["ranks"].size(); ++i) {
    EXPECT_EQ(fleet["ranks"][i], own_a["ranks"][i].get<int64_t>() +
                                     own_b["ranks"][i].get<int64_t>());
  }
  // Served counts stay in each daemon's own store: the fleet keeps none.
  EXPECT_EQ(fleet["served"], 0);
  EXPECT_EQ(fleet["saved_ms"], 0);

  // The page says it is the fleet's, and names its hosts.
  const std::string page = da.File("fleet.html");
  const std::string said =
      RunToExit(absl::StrCat(Cli(*a), " report --fleet -o ", page), &code,
                /*with_stderr=*/true);
  ASSERT_EQ(code, 0) << said;
  EXPECT_NE(said.find("7 records of 2 hosts"), std::string::npos) << said;
  std::stringstream html;
  html << std::ifstream(page).rdbuf();
  for (const char* part :
       {"<h1>tunedb fleet report</h1>", "2 hosts, 7 records",
        "<section id=hosts>", "<td>host-a</td>", "<td>host-b</td>",
        "<section id=devices>", "<section id=workspaces>"}) {
    EXPECT_NE(html.str().find(part), std::string::npos) << part;
  }
}

TEST_F(FleetReportTest, TheFleetsWalkReadsEveryRowInBatchesAndListsADamagedOne) {
  FleetOptions options;
  options.url = url_;
  auto fleet = FleetStore::Open(options);
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  std::vector<Record> records;
  for (const auto& [host, n] : std::vector<std::pair<std::string, int>>{
           {"h1", 1}, {"h1", 2}, {"h1", 3}, {"h2", 1}, {"h2", 2}}) {
    Record r = TestRecord(n);
    r.host = host;
    records.push_back(r);
  }
  for (const Record& r : records) {
    ASSERT_TRUE((*fleet)->Publish({r}, r.host).ok());
  }
  server()->Sql(db_,
                "UPDATE fleet_records SET body = '{' WHERE host = 'h2' AND "
                "key_text = (SELECT MIN(key_text) FROM fleet_records)");

  std::vector<std::pair<std::string, std::string>> seen;  // key, host
  std::vector<BadRow> bad;
  ASSERT_TRUE((*fleet)
                  ->ReportWalk(
                      [&](const std::string& host, const Record& r) {
                        EXPECT_EQ(r.host, host);
                        EXPECT_EQ(r.served_count, 0);
                        seen.emplace_back(r.key.ToText(), host);
                        return true;
                      },
                      [&](const BadRow& row) {
                        bad.push_back(row);
                        return true;
                      },
                      /*batch_rows=*/2)
                  .ok());
  EXPECT_EQ(seen.size(), 4u);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].reason.rfind("host h2: ", 0), 0u) << bad[0].reason;

  // A visit that returns false stops the walk.
  int visits = 0;
  ASSERT_TRUE((*fleet)
                  ->ReportWalk([&](const std::string&,
                                   const Record&) { return ++visits < 1; },
                               [](const BadRow&) { return true; }, 2)
                  .ok());
  EXPECT_EQ(visits, 1);
}

TEST_F(FleetReportTest, AnUnreachableFleetFailsOnlyTheReportWithUnavailableNamingIt) {
  TempDir dir;
  auto d = Daemon(dir, "host-a");
  auto stub = d->Connect();
  v1::TuneResponse tuned;
  ASSERT_TRUE(testing_util::Tune(stub.get(), 1, &tuned).ok());
  ASSERT_TRUE(server()->Stop());

  v1::ReportResponse response;
  const grpc::Status fleet = AskReport(stub.get(), true, &response);
  EXPECT_EQ(fleet.error_code(), grpc::StatusCode::UNAVAILABLE)
      << fleet.error_message();
  EXPECT_NE(fleet.error_message().find(absl::StrCat(
                "fleet database postgresql://tunedb@127.0.0.1:",
                server()->port(), "/", db_)),
            std::string::npos)
      << fleet.error_message();
  // The daemon goes on: its own report, and a search of a new key.
  EXPECT_TRUE(AskReport(stub.get(), false, &response).ok());
  ASSERT_TRUE(testing_util::Tune(stub.get(), 2, &tuned).ok());
  EXPECT_TRUE(tuned.searched());
}

TEST(FleetReportWithoutFleetTest, ADaemonWithoutAFleetSaysSoAndTheCliExitsAsForAPrecondition) {
  TempDir dir;
  DaemonProcess d(dir, {"--finder", "simulated"});
  auto stub = d.Connect();
  v1::ReportResponse response;
  const grpc::Status asked = AskReport(stub.get(), true, &response);
  EXPECT_EQ(asked.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(asked.error_message().find("this daemon has no fleet database"),
            std::string::npos)
      << asked.error_message();

  int code = -1;
  const std::string said = RunToExit(
      absl::StrCat(Cli(d), " report --fleet --json"), &code, true);
  EXPECT_EQ(code, 1) << said;  // as other FAILED_PRECONDITION answers
  EXPECT_NE(said.find("this daemon has no fleet database"), std::string::npos)
      << said;

  // A fleet's report takes no filter.
  grpc::ClientContext ctx;
  v1::ReportRequest request;
  request.set_fleet(true);
  (*request.mutable_filter()->mutable_fields())["n"] = "1";
  const grpc::Status filtered = stub->Report(&ctx, request, &response);
  EXPECT_EQ(filtered.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(filtered.error_message().find("filter"), std::string::npos);
}

}  // namespace
}  // namespace tunedb
