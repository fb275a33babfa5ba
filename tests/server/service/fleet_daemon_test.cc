// The fleet tier end to end: tunedbd processes (simulated finder, a SQLite
// file each) sharing one real PostgreSQL database started by the suite.
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "store/fleet/fleet_jobs.h"
#include "store/fleet/fleet_options.h"
#include "tests/server/daemon_process.h"
#include "tests/testing/free_port.h"
#include "tests/testing/postgres_server.h"
#include "tests/testing/postgres_test.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

using testing_util::DaemonProcess;
using testing_util::PostgresServer;
using testing_util::ProtoProblem;
using testing_util::RunToExit;
using testing_util::TempDir;
using testing_util::TestKey;

class FleetDaemonTest : public testing_util::PostgresTest {
 protected:
  // A daemon on the fleet: host name `host`, simulated searches of
  // `slow_ms`, `extra` flags after these.
  std::unique_ptr<DaemonProcess> Daemon(const TempDir& dir,
                                        const std::string& host, int slow_ms,
                                        std::vector<std::string> extra = {}) {
    std::vector<std::string> flags = {"--finder",
                                      "simulated",
                                      "--simulated",
                                      absl::StrCat("slow_ms=", slow_ms),
                                      "--synchronous",
                                      "NORMAL",
                                      "--host-name",
                                      host,
                                      "--fleet",
                                      url_,
                                      "--fleet-lease",
                                      "2"};
    flags.insert(flags.end(), extra.begin(), extra.end());
    return std::make_unique<DaemonProcess>(dir, flags);
  }

  static v1::StatsResponse Stats(v1::TuneDb::Stub* stub) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(10));
    v1::StatsResponse stats;
    EXPECT_TRUE(stub->Stats(&ctx, v1::StatsRequest(), &stats).ok());
    return stats;
  }

  // Waits up to `seconds` until every daemon's outbox is empty.
  static bool OutboxesDrain(const std::vector<v1::TuneDb::Stub*>& stubs,
                            int seconds) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < until) {
      bool empty = true;
      for (auto* stub : stubs) empty = empty && Stats(stub).fleet().outbox() == 0;
      if (empty) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  static grpc::Status TuneWithin(v1::TuneDb::Stub* stub, int64_t n,
                                 v1::TuneResponse* resp, int seconds) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(seconds));
    v1::TuneRequest req;
    *req.mutable_problem() = ProtoProblem(n);
    return stub->Tune(&ctx, req, resp);
  }

  // Three daemons on the fleet (host-a, host-b, host-c), each in its own
  // folder, and a stub of each.
  struct Three {
    TempDir dirs[3];
    std::vector<std::unique_ptr<DaemonProcess>> daemons;
    std::vector<std::unique_ptr<v1::TuneDb::Stub>> stubs;
    std::vector<v1::TuneDb::Stub*> all() const {
      return {stubs[0].get(), stubs[1].get(), stubs[2].get()};
    }
  };
  std::unique_ptr<Three> ThreeDaemons(int slow_ms) {
    auto three = std::make_unique<Three>();
    for (int i = 0; i < 3; ++i) {
      three->daemons.push_back(Daemon(
          three->dirs[i], std::string("host-") + static_cast<char>('a' + i),
          slow_ms));
    }
    for (auto& d : three->daemons) three->stubs.push_back(d->Connect());
    return three;
  }
};

TEST_F(FleetDaemonTest, AProblemTunedOnOneDaemonIsAnsweredOnTheOthersWithoutASearch) {
  auto three = ThreeDaemons(20);
  v1::TuneDb::Stub* sa = three->stubs[0].get();
  v1::TuneDb::Stub* sb = three->stubs[1].get();
  v1::TuneDb::Stub* sc = three->stubs[2].get();

  v1::TuneResponse tuned;
  ASSERT_TRUE(testing_util::Tune(sa, 8, &tuned).ok());
  EXPECT_TRUE(tuned.searched());
  for (auto* stub : {sb, sc}) {
    v1::TuneResponse answered;
    ASSERT_TRUE(testing_util::Tune(stub, 8, &answered).ok());
    EXPECT_FALSE(answered.searched());
    EXPECT_EQ(answered.choice().algo().algo(), tuned.choice().algo().algo());
    EXPECT_EQ(answered.record().host(), "host-a");
    EXPECT_EQ(Stats(stub).searches(), 0);
    EXPECT_EQ(Stats(stub).fleet().fetched(), 1);
  }

  // A Lookup (which never searches) reads through to the fleet as well.
  ASSERT_TRUE(testing_util::Tune(sa, 9, &tuned).ok());
  ASSERT_TRUE(OutboxesDrain({sa}, 10));
  grpc::ClientContext ctx;
  v1::LookupRequest lookup;
  *lookup.mutable_problem() = ProtoProblem(9);
  ToProto(testing_util::TestDevice(), lookup.mutable_device());
  v1::LookupResponse found;
  ASSERT_TRUE(sc->Lookup(&ctx, lookup, &found).ok());
  EXPECT_EQ(found.record().host(), "host-a");
  EXPECT_EQ(Stats(sc).searches(), 0);
  EXPECT_TRUE(Stats(sc).fleet().connected());
}

TEST_F(FleetDaemonTest, AForcedTuneSearchesAgainAndTheFleetKeepsBothHostsMeasurements) {
  auto three = ThreeDaemons(5);
  v1::TuneResponse first;
  ASSERT_TRUE(testing_util::Tune(three->stubs[0].get(), 8, &first).ok());
  EXPECT_TRUE(first.searched());
  grpc::ClientContext ctx;
  v1::TuneRequest req;
  *req.mutable_problem() = ProtoProblem(8);
  req.set_force(true);
  v1::TuneResponse forced;
  ASSERT_TRUE(three->stubs[1]->Tune(&ctx, req, &forced).ok());
  EXPECT_TRUE(forced.searched());
  EXPECT_EQ(forced.record().host(), "host-b");
  ASSERT_TRUE(OutboxesDrain(three->all(), 10));
  EXPECT_EQ(SqlInt("SELECT COUNT(*) FROM fleet_records"), 2);
  // host-c, which has neither, is answered by the rule: equal in timing,
  // verification and repeats, the later measurement (host-b's).
  v1::TuneResponse answered;
  ASSERT_TRUE(testing_util::Tune(three->stubs[2].get(), 8, &answered).ok());
  EXPECT_FALSE(answered.searched());
  EXPECT_EQ(answered.record().host(), "host-b");
}

TEST_F(FleetDaemonTest, SixtyFourConcurrentIdenticalTunesOverThreeDaemonsRunOneSearch) {
  auto three = ThreeDaemons(300);
  auto& stubs = three->stubs;

  std::atomic<int> ok{0}, said_searched{0}, said_waited{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 64; ++i) {
    threads.emplace_back([&, i] {
      v1::TuneResponse resp;
      if (TuneWithin(stubs[i % 3].get(), 16, &resp, 20).ok()) ++ok;
      said_searched += resp.searched();
      said_waited += resp.waited_for_search();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 64);
  int64_t searches = 0;
  for (auto& stub : stubs) searches += Stats(stub.get()).searches();
  EXPECT_EQ(searches, 1);
  // Only the call that ran the search says so; the callers that waited for
  // it, on its daemon or another, say that instead.
  EXPECT_EQ(said_searched.load(), 1);
  EXPECT_GT(said_waited.load(), 0);
  EXPECT_LE(said_searched.load() + said_waited.load(), 64);
}

TEST_F(FleetDaemonTest, AFleetPrewarmOfAThousandProblemsOverThreeDaemonsSearchesEachOnce) {
  auto three = ThreeDaemons(2);
  auto& stubs = three->stubs;

  FleetOptions options;
  options.url = url_;
  auto jobs = FleetJobs::Open(options);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  std::vector<ProblemKey> keys;
  for (int n = 1; n <= 1000; ++n) keys.push_back(TestKey(n));
  auto enqueued = (*jobs)->Enqueue("thousand", keys);
  ASSERT_TRUE(enqueued.ok()) << enqueued.status();
  EXPECT_EQ(enqueued->added, 1000);

  FleetBatchProgress progress;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(40);
  while (std::chrono::steady_clock::now() < until) {
    auto p = (*jobs)->Progress("thousand");
    ASSERT_TRUE(p.ok()) << p.status();
    progress = *p;
    if (progress.done + progress.failed == 1000) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(progress.done, 1000);
  EXPECT_EQ(progress.searched, 1000);
  int64_t searches = 0;
  std::vector<int64_t> per_daemon;
  for (auto& stub : stubs) {
    per_daemon.push_back(Stats(stub.get()).searches());
    searches += per_daemon.back();
  }
  EXPECT_EQ(searches, 1000);
  for (int64_t s : per_daemon) EXPECT_GT(s, 0) << "a daemon ran no job";
  ASSERT_TRUE(OutboxesDrain(three->all(), 20));
  EXPECT_EQ(SqlInt("SELECT COUNT(DISTINCT key_text) FROM fleet_records"), 1000);
  EXPECT_EQ(SqlInt("SELECT COUNT(*) FROM fleet_records"), 1000);

  // Enqueued again, the batch has nothing left to do.
  auto again = (*jobs)->Enqueue("thousand", keys);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->added, 0);
}

TEST_F(FleetDaemonTest, JobsOfADaemonKilledWhileHoldingLeasesFinishElsewhereAfterExpiry) {
  FleetOptions options;
  options.url = url_;
  auto jobs = FleetJobs::Open(options);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  std::vector<ProblemKey> keys;
  for (int n = 1; n <= 6; ++n) keys.push_back(TestKey(n));
  ASSERT_TRUE((*jobs)->Enqueue("kill", keys).ok());

  TempDir da;
  auto a = Daemon(da, "host-a", 60000);  // searches that never end in time
  a->Connect();
  // Wait until host-a holds two running jobs (two per device).
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < until &&
         (*jobs)->Progress("kill")->running < 2) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ((*jobs)->Progress("kill")->running, 2);
  a->Stop(SIGKILL);

  TempDir db, dc;
  auto b = Daemon(db, "host-b", 20);
  auto c = Daemon(dc, "host-c", 20);
  auto sb = b->Connect(), sc = c->Connect();
  FleetBatchProgress progress;
  until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < until) {
    progress = *(*jobs)->Progress("kill");
    if (progress.done == 6) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(progress.done, 6);
  EXPECT_EQ(progress.failed, 0);
  EXPECT_EQ(Stats(sb.get()).searches() + Stats(sc.get()).searches(), 6);
  EXPECT_EQ(SqlInt("SELECT COUNT(*) FROM fleet_jobs WHERE batch = 'kill' "
                   "AND holder LIKE 'host-a/%'"),
            0);
  EXPECT_EQ(SqlInt("SELECT COUNT(*) FROM fleet_jobs WHERE batch = 'kill' "
                   "AND attempts = 2"),
            2);
}

TEST_F(FleetDaemonTest, PostgresStoppedDuringAWriteStormLosesNoAcknowledgedRecord) {
  auto three = ThreeDaemons(5);
  auto& stubs = three->stubs;

  std::atomic<bool> stop{false};
  std::atomic<int> failed{0};
  std::atomic<int64_t> next{1};
  std::mutex mu;
  std::set<int64_t> acknowledged;
  std::vector<std::thread> writers;
  for (int t = 0; t < 6; ++t) {
    writers.emplace_back([&, t] {
      while (!stop.load()) {
        const int64_t n = next.fetch_add(1);
        v1::TuneResponse resp;
        if (TuneWithin(stubs[t % 3].get(), n, &resp, 10).ok()) {
          std::lock_guard<std::mutex> lock(mu);
          acknowledged.insert(n);
        } else {
          ++failed;
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  ASSERT_TRUE(server()->Stop("fast"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  int64_t during_outage = 0;
  {
    std::lock_guard<std::mutex> lock(mu);
    during_outage = static_cast<int64_t>(acknowledged.size());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  v1::StatsResponse down = Stats(stubs[0].get());
  EXPECT_FALSE(down.fleet().connected());
  // The error names the database that cannot be reached and why, first,
  // whichever background operation met it.
  const std::string& last_error = down.fleet().last_error();
  EXPECT_EQ(last_error.rfind("fleet database ", 0), 0u) << last_error;
  EXPECT_NE(last_error.find("unreachable"), std::string::npos) << last_error;
  EXPECT_EQ(last_error.find("client encoding"), std::string::npos)
      << last_error;
  std::string error;
  ASSERT_TRUE(server()->Start(&error)) << error;
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  stop = true;
  for (auto& t : writers) t.join();

  EXPECT_EQ(failed.load(), 0);
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_GT(static_cast<int64_t>(acknowledged.size()), during_outage)
        << "no Tune succeeded after the restart";
  }
  ASSERT_TRUE(OutboxesDrain(three->all(), 20));
  std::set<int64_t> in_fleet;
  for (absl::string_view line :
       absl::StrSplit(server()->Sql(db_, "SELECT DISTINCT key_text FROM fleet_records"),
                      '\n', absl::SkipEmpty())) {
    auto key = ProblemKey::Parse(line);
    ASSERT_TRUE(key.ok()) << line;
    in_fleet.insert(key->problem.n);
  }
  for (int64_t n : acknowledged) {
    EXPECT_EQ(in_fleet.count(n), 1u) << "acknowledged n=" << n << " missing";
  }
  EXPECT_TRUE(Stats(stubs[0].get()).fleet().connected());
}

TEST_F(FleetDaemonTest, TheCliPrewarmsThroughTheFleetShowsProgressAndResumes) {
  TempDir da, db;
  auto a = Daemon(da, "host-a", 2);
  auto b = Daemon(db, "host-b", 2);
  auto sa = a->Connect(), sb = b->Connect();
  const std::string prewarm = absl::StrCat(
      TUNEDB_CLI_PATH, " --json prewarm -m resnet50 --batch 1 --no-progress",
      " --device '", testing_util::TestDevice().ToText(), "' --fleet '", url_,
      "'");
  int code = -1;
  auto first = nlohmann::json::parse(RunToExit(prewarm, &code));
  EXPECT_EQ(code, 0);
  const int64_t total = first["total"];
  EXPECT_GT(total, 20);
  EXPECT_EQ(first["added"], total);
  EXPECT_EQ(first["done"], total);
  EXPECT_EQ(first["searched"], total);
  EXPECT_EQ(Stats(sa.get()).searches() + Stats(sb.get()).searches(), total);
  EXPECT_GT(Stats(sa.get()).fleet().jobs_done(), 0);
  EXPECT_GT(Stats(sb.get()).fleet().jobs_done(), 0);

  // Run again: nothing is added or searched, the batch is reported done.
  auto again = nlohmann::json::parse(RunToExit(prewarm, &code));
  EXPECT_EQ(code, 0);
  EXPECT_EQ(again["added"], 0);
  EXPECT_EQ(again["done"], total);
  EXPECT_EQ(Stats(sa.get()).searches() + Stats(sb.get()).searches(), total);

  // `tunedb show --fleet` lists the fleet's measurement of a key; `stats`
  // reports the fleet.
  ASSERT_TRUE(OutboxesDrain({sa.get(), sb.get()}, 10));
  const std::string key_text = server()->Sql(
      db_, "SELECT key_text FROM fleet_records ORDER BY key_text LIMIT 1");
  auto shown = nlohmann::json::parse(RunToExit(
      absl::StrCat(TUNEDB_CLI_PATH, " --json --address unix:", a->socket(),
                   " show --fleet '", url_, "' '", key_text, "'"),
      &code));
  EXPECT_EQ(code, 0);
  ASSERT_EQ(shown["fleet"].size(), 1u);
  EXPECT_EQ(shown["fleet"][0]["answer"], true);
  auto stats = nlohmann::json::parse(RunToExit(
      absl::StrCat(TUNEDB_CLI_PATH, " --json --address unix:", a->socket(),
                   " stats"),
      &code));
  EXPECT_EQ(stats["fleet"]["connected"], true);
  EXPECT_EQ(stats["fleet"]["outbox"], 0);
  auto doctor = nlohmann::json::parse(RunToExit(
      absl::StrCat(TUNEDB_CLI_PATH, " --json --address unix:", a->socket(),
                   " doctor"),
      &code));
  bool fleet_checked = false;
  for (const auto& check : doctor["checks"]) {
    if (check["check"] != "fleet database") continue;
    fleet_checked = true;
    EXPECT_EQ(check["ok"], true) << check.dump();
  }
  EXPECT_TRUE(fleet_checked) << doctor.dump();
}

TEST_F(FleetDaemonTest, TheCliRevalidatesThroughTheFleetFromTheOldVersionsRecords) {
  TempDir da;
  auto a = Daemon(da, "host-a", 0);
  auto sa = a->Connect();
  const std::string cli =
      absl::StrCat(TUNEDB_CLI_PATH, " --address unix:", a->socket());
  int code = -1;
  RunToExit(cli + " prewarm -m resnet18 --batch 1 --ops fwd --no-progress",
            &code);
  ASSERT_EQ(code, 0);
  ASSERT_TRUE(OutboxesDrain({sa.get()}, 10));
  // The daemon's records become cuDNN 9.14's only, here and in the fleet.
  const std::string exported = RunToExit(cli + " export", &code);
  ASSERT_EQ(code, 0);
  std::string old_version;
  int records = 0;
  for (absl::string_view line : absl::StrSplit(exported, '\n')) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.contains("key")) continue;
    j["key"] = absl::StrReplaceAll(j["key"].get<std::string>(),
                                   {{"cudnn=9.19.0", "cudnn=9.14.0"}});
    old_version += j.dump() + "\n";
    ++records;
  }
  ASSERT_GT(records, 5);
  std::ofstream(da.File("old.jsonl")) << old_version;
  RunToExit(cli + " invalidate --all --yes", &code);
  ASSERT_EQ(code, 0);
  server()->Sql(db_, "DELETE FROM fleet_records");
  RunToExit(cli + " import " + da.File("old.jsonl"), &code);
  ASSERT_EQ(code, 0);

  auto run = nlohmann::json::parse(RunToExit(
      cli + " --json revalidate --from 9.14 --no-progress --fleet '" + url_ +
          "'",
      &code));
  EXPECT_EQ(code, 0);
  EXPECT_EQ(run["total"], records);
  EXPECT_EQ(run["done"], records);
  EXPECT_EQ(run["failed"], 0);
  EXPECT_EQ(run["batch"].get<std::string>().rfind("revalidate-91400-", 0), 0u)
      << run.dump();
  auto fresh = nlohmann::json::parse(
      RunToExit(cli + " --json query --filter cudnn=9.19.0", &code));
  EXPECT_EQ(code, 0);
  int revalidated = 0;
  for (const auto& rec : fresh) {
    if (rec["revalidated_from_cudnn"] == 91400) ++revalidated;
  }
  EXPECT_EQ(revalidated, records);
}

TEST_F(FleetDaemonTest, TheConfigFileNamesTheFleetAndMetricsReportIt) {
  TempDir dir;
  const int port = testing_util::FreeLoopbackPort();
  std::ofstream(dir.File("tunedbd.conf"))
      << "finder = simulated\nhost-name = from-config\nfleet = " << url_
      << "\nmetrics-address = " << port << "\n";
  DaemonProcess daemon(dir, {"--config", dir.File("tunedbd.conf")});
  auto stub = daemon.Connect();
  v1::TuneResponse resp;
  ASSERT_TRUE(testing_util::Tune(stub.get(), 8, &resp).ok());
  ASSERT_TRUE(OutboxesDrain({stub.get()}, 10));
  EXPECT_TRUE(Stats(stub.get()).fleet().connected());
  EXPECT_EQ(SqlInt("SELECT COUNT(*) FROM fleet_records WHERE host = "
                   "'from-config'"),
            1);
  int code = -1;
  const std::string metrics = RunToExit(
      absl::StrCat("/usr/bin/python3 -c \"import urllib.request; print("
                   "urllib.request.urlopen('http://127.0.0.1:",
                   port, "/metrics').read().decode())\""),
      &code);
  ASSERT_EQ(code, 0) << metrics;
  EXPECT_NE(metrics.find("tunedb_fleet_connected 1"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("tunedb_fleet_outbox 0"), std::string::npos);
  EXPECT_NE(
      metrics.find("tunedb_fleet_operations_total{outcome=\"published\"} 1"),
      std::string::npos);
}

// Runs tunedbd to its exit (it should refuse to start); its output.
std::string RunDaemonToExit(const TempDir& dir, const std::string& fleet_url,
                            int* exit_code) {
  std::string command = absl::StrCat(
      TUNEDBD_PATH, " --finder simulated --log-level warn --db ",
      dir.File("d.db"), " --socket ", dir.File("d.sock"), " --fleet '",
      fleet_url, "'");
  return RunToExit(command, exit_code, true);
}

TEST_F(FleetDaemonTest, AWrongPasswordKeepsTheDaemonFromStartingWithAClearError) {
  TempDir dir;
  int code = 0;
  std::string out =
      RunDaemonToExit(dir, server()->Url(db_, "not-the-password"), &code);
  EXPECT_NE(code, 0);
  EXPECT_NE(out.find("refused the credentials"), std::string::npos) << out;
  EXPECT_NE(out.find("password authentication failed"), std::string::npos)
      << out;
  EXPECT_EQ(out.find("not-the-password"), std::string::npos)
      << "the password is printed: " << out;
}

TEST_F(FleetDaemonTest, ANewerFleetSchemaKeepsTheDaemonFromStartingWithAClearError) {
  FleetOptions options;
  options.url = url_;
  ASSERT_TRUE(FleetJobs::Open(options).ok());
  server()->Sql(db_, "UPDATE tunedb_fleet_schema SET version = 99");
  TempDir dir;
  int code = 0;
  std::string out = RunDaemonToExit(dir, url_, &code);
  EXPECT_NE(code, 0);
  EXPECT_NE(out.find("schema version 99, newer than"), std::string::npos)
      << out;
}

TEST_F(FleetDaemonTest, AnUnreachableFleetIsReportedAndTunesSucceedLocally) {
  TempDir dir;
  // A port nothing listens on.
  std::string url = server()->Url(db_);
  url.replace(url.find(std::to_string(server()->port())),
              std::to_string(server()->port()).size(), "1");
  DaemonProcess d(dir, {"--finder", "simulated", "--fleet", url,
                        "--host-name", "lonely"});
  auto stub = d.Connect();
  v1::TuneResponse resp;
  ASSERT_TRUE(testing_util::Tune(stub.get(), 8, &resp).ok());
  EXPECT_TRUE(resp.searched());
  v1::StatsResponse stats = Stats(stub.get());
  EXPECT_FALSE(stats.fleet().connected());
  EXPECT_NE(stats.fleet().last_error().find("unreachable"), std::string::npos)
      << stats.fleet().last_error();
  EXPECT_EQ(stats.fleet().outbox(), 1);
  EXPECT_EQ(stats.fleet().database(), "postgresql://tunedb@127.0.0.1:1/" + db_);
}

}  // namespace
}  // namespace tunedb
