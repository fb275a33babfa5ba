// tunedbd as a process, and the faults it must survive: kill -9 at random
// moments of a Tune and Import storm loses no acknowledged record and leaves
// a sound database; SIGTERM shuts down cleanly; a search worker that hangs or
// dies fails its request while other clients are served; a full disk fails
// the write, not the daemon; clients that disconnect mid-stream leave it
// healthy with nothing partial stored.
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "store/record_json.h"
#include "store/sql/database.h"
#include "store/sql/statement.h"
#include "store/store.h"
#include "tests/server/daemon_process.h"
#include "tests/server/test_util.h"
#include "tunedb/v1/tunedb.grpc.pb.h"

namespace tunedb {
namespace {

using testing_util::DaemonProcess;
using testing_util::ProtoProblem;
using testing_util::TempDir;
using testing_util::TestProblem;
using testing_util::Tune;

// How many times the kill -9 campaign kills the daemon:
// TUNEDB_KILL_CAMPAIGN_KILLS, or 12 (the ctest run, about 6 s). The figures
// in docs/reliability.md come from a run with 100.
int CampaignKills() {
  const char* text = std::getenv("TUNEDB_KILL_CAMPAIGN_KILLS");
  int kills = 0;
  if (text != nullptr && absl::SimpleAtoi(text, &kills) && kills > 0) {
    return kills;
  }
  return 12;
}

// Opens `path` as the next daemon would (recovering the WAL of the killed
// one); true if the whole PRAGMA integrity_check (not only quick_check)
// passes. `keys` receives the key text of every stored record.
bool IntegrityOk(const std::string& path, std::set<std::string>* keys) {
  auto db = sql::Database::Open(path, sql::Database::Mode::kReadWrite, 5000);
  if (!db.ok()) return false;
  auto check = (*db)->GetUniqueStatement("PRAGMA integrity_check");
  if (!check.ok()) return false;
  absl::StatusOr<bool> row = check->Step();
  const bool ok = row.ok() && *row && check->ColumnText(0) == "ok" &&
                  !check->Step().value_or(true);
  auto stored = (*db)->GetUniqueStatement("SELECT key_text FROM records");
  if (!stored.ok()) return false;
  while (stored->Step().value_or(false)) keys->insert(stored->ColumnText(0));
  return ok;
}

// One Import of `keys` (JSON lines as tunedb export writes them) on `stub`:
// the call's status, with the daemon's answer in `response`.
grpc::Status ImportRecords(v1::TuneDb::Stub* stub,
                           const std::vector<ProblemKey>& keys,
                           v1::ImportResponse* response) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  auto writer = stub->Import(&ctx, response);
  for (size_t i = 0; i < keys.size(); ++i) {
    Record record = testing_util::TestRecord(1);
    record.key = keys[i];
    v1::ImportLine line;
    line.set_json(RecordToJson(record));
    if (i == 0) line.set_expected_lines(static_cast<int64_t>(keys.size()));
    if (!writer->Write(line)) break;
  }
  writer->WritesDone();
  return writer->Finish();
}

// True when the daemon acknowledged every line of `keys` as imported.
bool ImportKeys(v1::TuneDb::Stub* stub, const std::vector<ProblemKey>& keys) {
  v1::ImportResponse response;
  return ImportRecords(stub, keys, &response).ok() &&
         response.imported() == static_cast<int64_t>(keys.size());
}

// kill -9 at random moments of a storm of Tunes (each stores a search) and
// Imports (16 records in one transaction): after each kill the file passes
// PRAGMA integrity_check, holds every record whose Tune or Import was
// acknowledged, and of each Import in flight at the kill holds all records
// or none.
TEST(DaemonTest, KillNineCampaignDuringTuneAndImportStormLosesNothing) {
  TempDir dir;
  const std::string path = dir.File("d.db");
  const int kills = CampaignKills();
  const unsigned seed = std::random_device()();
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> storm_ms(20, 400);
  constexpr int kImportRecords = 16;
  std::vector<std::string> acknowledged;  // key texts
  int64_t tunes = 0, imports = 0;
  int integrity_ok = 0, partial_imports = 0;
  int64_t lost = 0;
  std::atomic<int64_t> next_n{1};
  for (int round = 0; round < kills; ++round) {
    std::mutex mu;
    std::vector<std::vector<ProblemKey>> unacknowledged_imports;
    {
      DaemonProcess daemon(dir, {"--finder", "simulated"});
      auto stub = daemon.Connect();
      grpc::ClientContext devices_ctx;
      v1::DevicesResponse devices;
      ASSERT_TRUE(
          stub->Devices(&devices_ctx, v1::DevicesRequest(), &devices).ok());
      absl::StatusOr<DeviceKey> device = FromProto(devices.devices(0).key());
      ASSERT_TRUE(device.ok()) << device.status();
      std::atomic<bool> stop{false};
      std::vector<std::thread> clients;
      for (int t = 0; t < 2; ++t) {
        clients.emplace_back([&] {
          while (!stop.load()) {
            const int64_t n = next_n.fetch_add(1);
            v1::TuneResponse resp;
            if (Tune(stub.get(), n, &resp).ok()) {
              std::lock_guard<std::mutex> lock(mu);
              acknowledged.push_back(
                  ProblemKey{*device, TestProblem(n)}.ToText());
              ++tunes;
            }
          }
        });
      }
      clients.emplace_back([&] {
        while (!stop.load()) {
          std::vector<ProblemKey> keys;
          for (int i = 0; i < kImportRecords; ++i) {
            keys.push_back(
                ProblemKey{*device, TestProblem(next_n.fetch_add(1), 32, 32)});
          }
          const bool ok = ImportKeys(stub.get(), keys);
          std::lock_guard<std::mutex> lock(mu);
          if (ok) {
            for (const ProblemKey& key : keys) {
              acknowledged.push_back(key.ToText());
            }
            ++imports;
          } else {
            unacknowledged_imports.push_back(std::move(keys));
          }
        }
      });
      std::this_thread::sleep_for(std::chrono::milliseconds(storm_ms(random)));
      const int status = daemon.Stop(SIGKILL);
      EXPECT_TRUE(WIFSIGNALED(status));
      stop = true;
      for (auto& c : clients) c.join();
    }
    // The file as the next daemon finds it.
    std::set<std::string> stored;
    if (IntegrityOk(path, &stored)) ++integrity_ok;
    for (const std::string& key : acknowledged) lost += stored.count(key) == 0;
    for (const auto& keys : unacknowledged_imports) {
      int present = 0;
      for (const ProblemKey& key : keys) present += stored.count(key.ToText());
      if (present != 0 && present != kImportRecords) ++partial_imports;
    }
  }
  const std::string summary = absl::StrCat(
      "kill -9 campaign: ", kills, " kills, integrity ok ", integrity_ok, "/",
      kills, ", acknowledged lost ", lost, " of ", acknowledged.size(), " (",
      tunes, " tunes, ", imports, " imports of ", kImportRecords,
      " records), partial imports ", partial_imports, ", seed ", seed);
  std::printf("%s\n", summary.c_str());
  RecordProperty("campaign", summary);
  EXPECT_EQ(integrity_ok, kills);
  EXPECT_EQ(lost, 0);
  EXPECT_EQ(partial_imports, 0);
  EXPECT_GT(tunes, 0) << "the storm stored too little to test";
  EXPECT_GT(imports, 0) << "the storm imported too little to test";
}

TEST(DaemonTest, SigtermShutsDownCleanlyAndDataPersists) {
  TempDir dir;
  {
    DaemonProcess daemon(dir, {"--finder", "simulated"});
    auto stub = daemon.Connect();
    for (int64_t n = 1; n <= 3; ++n) {
      v1::TuneResponse resp;
      ASSERT_TRUE(Tune(stub.get(), n, &resp).ok());
    }
    int status = daemon.Stop(SIGTERM);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    struct stat st;
    EXPECT_NE(stat(daemon.socket().c_str(), &st), 0) << "socket left behind";
  }
  DaemonProcess daemon(dir, {"--finder", "simulated"});
  auto stub = daemon.Connect();
  v1::TuneResponse resp;
  ASSERT_TRUE(Tune(stub.get(), 2, &resp).ok());
  EXPECT_FALSE(resp.searched()) << "the record did not survive the restart";
  grpc::ClientContext ctx;
  v1::StatsResponse stats;
  ASSERT_TRUE(stub->Stats(&ctx, v1::StatsRequest(), &stats).ok());
  EXPECT_EQ(stats.records(), 3);
}

TEST(DaemonTest, SocketIsGroupAccessibleOnly) {
  TempDir dir;
  DaemonProcess daemon(dir, {"--finder", "simulated"});
  daemon.Connect();
  struct stat st;
  ASSERT_EQ(stat(daemon.socket().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660);
}

// The first device the daemon serves.
v1::DeviceKey FirstDevice(v1::TuneDb::Stub* stub) {
  grpc::ClientContext ctx;
  v1::DevicesResponse devices;
  EXPECT_TRUE(stub->Devices(&ctx, v1::DevicesRequest(), &devices).ok());
  return devices.devices_size() > 0 ? devices.devices(0).key()
                                    : v1::DeviceKey();
}

grpc::Status Lookup(v1::TuneDb::Stub* stub, const v1::DeviceKey& device,
                    int64_t n) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  v1::LookupRequest req;
  *req.mutable_problem() = ProtoProblem(n);
  *req.mutable_device() = device;
  v1::LookupResponse resp;
  return stub->Lookup(&ctx, req, &resp);
}

// Searches run in a tunedb-worker process; one search hangs past the search
// timeout (its worker is killed) and one kills its worker. Each fails its
// own request; other clients' lookups are answered all the while, and the
// next search runs in a fresh worker.
TEST(DaemonTest, HangingOrDyingWorkerFailsItsRequestWhileOthersAreServed) {
  TempDir dir;
  struct stat st;
  if (stat(TUNEDB_WORKER_PATH, &st) != 0) {
    GTEST_SKIP() << "tunedb-worker was not built";
  }
  DaemonProcess daemon(dir, {"--finder", "simulated-workers", "--simulated",
                             "hang_n=13,crash_n=14", "--search-timeout", "2"});
  auto stub = daemon.Connect();
  for (int64_t n = 1; n <= 3; ++n) {
    v1::TuneResponse resp;
    ASSERT_TRUE(Tune(stub.get(), n, &resp).ok());
  }
  const v1::DeviceKey device = FirstDevice(stub.get());
  std::atomic<bool> done{false};
  grpc::Status hung, crashed;
  std::thread faulty([&] {
    v1::TuneResponse resp;
    hung = Tune(stub.get(), 13, &resp);
    crashed = Tune(stub.get(), 14, &resp);
    done = true;
  });
  int served = 0, failed = 0;
  while (!done.load()) {
    for (int64_t n = 1; n <= 3; ++n) {
      if (Lookup(stub.get(), device, n).ok()) {
        ++served;
      } else {
        ++failed;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  faulty.join();
  EXPECT_TRUE(hung.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
              hung.error_code() == grpc::StatusCode::UNAVAILABLE)
      << hung.error_code() << ": " << hung.error_message();
  EXPECT_EQ(crashed.error_code(), grpc::StatusCode::UNAVAILABLE)
      << crashed.error_message();
  EXPECT_GT(served, 30) << "lookups were not answered during the hang";
  EXPECT_EQ(failed, 0);
  v1::TuneResponse ok;
  grpc::Status s = Tune(stub.get(), 8, &ok);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(ok.searched());
  EXPECT_EQ(ok.record().finder(), "simulated");
  grpc::ClientContext ctx;
  v1::StatsResponse stats;
  ASSERT_TRUE(stub->Stats(&ctx, v1::StatsRequest(), &stats).ok());
  EXPECT_EQ(stats.search_failures(), 2);
  EXPECT_EQ(stats.records(), 4);
}

// Clients that go away in the middle of an Import, a TuneBatch and a Query
// stream: the daemon stays healthy, the broken Import stores nothing, and
// the same calls made whole afterwards succeed.
TEST(DaemonTest, ClientsThatDisconnectMidStreamLeaveTheDaemonHealthy) {
  TempDir dir;
  DaemonProcess daemon(dir,
                       {"--finder", "simulated", "--simulated", "slow_ms=5"});
  auto stub = daemon.Connect();
  absl::StatusOr<DeviceKey> device = FromProto(FirstDevice(stub.get()));
  ASSERT_TRUE(device.ok()) << device.status();
  std::vector<std::string> lines;
  for (int64_t n = 1000; n < 1040; ++n) {
    Record record = testing_util::TestRecord(1);
    record.key = ProblemKey{*device, TestProblem(n, 32, 32)};
    lines.push_back(RecordToJson(record));
  }
  auto records = [&] {
    grpc::ClientContext ctx;
    v1::StatsResponse stats;
    EXPECT_TRUE(stub->Stats(&ctx, v1::StatsRequest(), &stats).ok())
        << "the daemon is not answering";
    return stats.records();
  };

  for (int attempt = 0; attempt < 3; ++attempt) {
    // Each broken client on a channel of its own, dropped with it.
    auto channel = grpc::CreateChannel("unix:" + daemon.socket(),
                                       grpc::InsecureChannelCredentials());
    auto client = v1::TuneDb::NewStub(channel);
    {
      grpc::ClientContext ctx;
      v1::ImportResponse resp;
      auto writer = client->Import(&ctx, &resp);
      for (size_t i = 0; i < lines.size() / 2; ++i) {
        v1::ImportLine line;
        line.set_json(lines[i]);
        if (i == 0) line.set_expected_lines(static_cast<int64_t>(lines.size()));
        ASSERT_TRUE(writer->Write(line));
      }
      ctx.TryCancel();
      EXPECT_FALSE(writer->Finish().ok());
    }
    {
      grpc::ClientContext ctx;
      auto stream = client->TuneBatch(&ctx);
      for (int64_t n = 1; n <= 40; ++n) {
        v1::TuneBatchRequest req;
        *req.mutable_request()->mutable_problem() = ProtoProblem(n);
        stream->Write(req);
      }
      v1::TuneBatchResponse first;
      EXPECT_TRUE(stream->Read(&first));
      ctx.TryCancel();
      stream->Finish();
    }
    {
      grpc::ClientContext ctx;
      v1::QueryRequest req;
      req.set_page_size(1000);
      auto reader = client->Query(&ctx, req);
      v1::Record record;
      EXPECT_TRUE(reader->Read(&record));
      ctx.TryCancel();
      reader->Finish();
    }
  }
  // The cut-off TuneBatches stored whole searches; the imports, nothing.
  EXPECT_GT(records(), 0);
  {
    grpc::ClientContext ctx;
    auto reader = stub->Query(&ctx, v1::QueryRequest());
    v1::Record record;
    int imported = 0;
    while (reader->Read(&record)) imported += record.problem().c() == 32;
    EXPECT_TRUE(reader->Finish().ok());
    EXPECT_EQ(imported, 0) << "records of a broken import were stored";
  }

  // Whole calls succeed, and the import arrives complete.
  EXPECT_TRUE(ImportKeys(stub.get(), [&] {
    std::vector<ProblemKey> keys;
    for (int64_t n = 1000; n < 1040; ++n) {
      keys.push_back(ProblemKey{*device, TestProblem(n, 32, 32)});
    }
    return keys;
  }()));
  {
    grpc::ClientContext ctx;
    auto stream = stub->TuneBatch(&ctx);
    for (int64_t n = 1; n <= 40; ++n) {
      v1::TuneBatchRequest req;
      *req.mutable_request()->mutable_problem() = ProtoProblem(n);
      ASSERT_TRUE(stream->Write(req));
    }
    stream->WritesDone();
    v1::TuneBatchResponse resp;
    int answered = 0;
    while (stream->Read(&resp)) {
      EXPECT_EQ(resp.code(), 0) << resp.message();
      ++answered;
    }
    EXPECT_TRUE(stream->Finish().ok());
    EXPECT_EQ(answered, 40);
  }
  EXPECT_EQ(records(), 80);
  grpc::ClientContext ctx;
  auto reader = stub->Query(&ctx, v1::QueryRequest());
  v1::Record record;
  int queried = 0;
  while (reader->Read(&record)) ++queried;
  EXPECT_TRUE(reader->Finish().ok());
  EXPECT_EQ(queried, 80);
}

// A full disk, as a file-size limit (ulimit -f) makes one: the search whose
// result cannot be stored fails with a code that says "do not retry" (not
// RESOURCE_EXHAUSTED, the API's "queue full, retry later"), it counts as a
// failed search, and the daemon keeps serving instead of dying of SIGXFSZ.
TEST(DaemonTest, FullDiskFailsTheSearchNotTheDaemonAndIsNotRetryable) {
  constexpr char kPrlimit[] = "/usr/bin/prlimit";
  if (access(kPrlimit, X_OK) != 0) GTEST_SKIP() << "no " << kPrlimit;
  TempDir dir;
  DaemonProcess daemon(dir, {"--finder", "simulated"},
                       {kPrlimit, "--fsize=196608"});  // 192 KiB per file
  auto stub = daemon.Connect();
  grpc::Status failed;
  int64_t stored = 0;
  for (int64_t n = 1; n <= 5000 && failed.ok(); ++n) {
    v1::TuneResponse resp;
    grpc::Status s = Tune(stub.get(), n, &resp);
    if (s.ok()) {
      ++stored;
    } else {
      failed = s;
    }
  }
  ASSERT_FALSE(failed.ok()) << "the file-size limit was never reached ("
                            << stored << " records stored)";
  EXPECT_GT(stored, 0);
  EXPECT_TRUE(failed.error_code() == grpc::StatusCode::FAILED_PRECONDITION ||
              failed.error_code() == grpc::StatusCode::INTERNAL)
      << failed.error_code() << ": " << failed.error_message();
  EXPECT_NE(failed.error_message().find("could not be stored"),
            std::string::npos)
      << failed.error_message();

  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::StatsRequest request;
  v1::StatsResponse stats;
  grpc::Status alive = stub->Stats(&ctx, request, &stats);
  ASSERT_TRUE(alive.ok()) << "the daemon died: " << alive.error_message();
  EXPECT_EQ(stats.searches(), stored);
  EXPECT_EQ(stats.search_failures(), 1);
  // What was stored before the disk filled is still served.
  v1::TuneResponse again;
  EXPECT_TRUE(Tune(stub.get(), 1, &again).ok());
  EXPECT_FALSE(again.searched());
}

// A disk that fills during an Import (the file-size limit again, this time
// reached by the import's staging): the Import fails with a code that says
// "do not retry", stores nothing, and the daemon goes on serving what it
// had.
TEST(DaemonTest, FullDiskFailsTheImportNotTheDaemonAndStoresNothing) {
  constexpr char kPrlimit[] = "/usr/bin/prlimit";
  if (access(kPrlimit, X_OK) != 0) GTEST_SKIP() << "no " << kPrlimit;
  TempDir dir;
  // Staging goes to SQLite's temporary folder: keep it in the test's.
  // 256 KiB per file: room for the schema and three records, far less
  // than the import below.
  DaemonProcess daemon(dir, {"--finder", "simulated"},
                       {kPrlimit, "--fsize=262144"},
                       {"SQLITE_TMPDIR=" + dir.path()});
  auto stub = daemon.Connect();
  for (int64_t n = 1; n <= 3; ++n) {
    v1::TuneResponse resp;
    ASSERT_TRUE(Tune(stub.get(), n, &resp).ok());
  }
  grpc::ClientContext devices_ctx;
  v1::DevicesResponse devices;
  ASSERT_TRUE(stub->Devices(&devices_ctx, v1::DevicesRequest(), &devices).ok());
  absl::StatusOr<DeviceKey> device = FromProto(devices.devices(0).key());
  ASSERT_TRUE(device.ok()) << device.status();
  std::vector<ProblemKey> keys;  // far more than 256 KiB of rows
  for (int64_t n = 1000; n < 6000; ++n) {
    keys.push_back(ProblemKey{*device, TestProblem(n, 32, 32)});
  }
  v1::ImportResponse response;
  const grpc::Status failed = ImportRecords(stub.get(), keys, &response);
  ASSERT_FALSE(failed.ok()) << "the file-size limit was never reached";
  EXPECT_TRUE(failed.error_code() == grpc::StatusCode::FAILED_PRECONDITION ||
              failed.error_code() == grpc::StatusCode::INTERNAL)
      << failed.error_code() << ": " << failed.error_message();
  EXPECT_EQ(response.imported(), 0);

  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto reader = stub->Query(&ctx, v1::QueryRequest());
  v1::Record record;
  int stored = 0;
  while (reader->Read(&record)) ++stored;
  ASSERT_TRUE(reader->Finish().ok()) << "the daemon died or cannot read";
  EXPECT_EQ(stored, 3) << "an Import that failed stored some of its rows";
  v1::TuneResponse again;
  ASSERT_TRUE(Tune(stub.get(), 2, &again).ok());
  EXPECT_FALSE(again.searched());
}

TEST(DaemonTest, ConfigFileIsReadAndFlagsOverrideIt) {
  TempDir dir;
  {
    std::ofstream config(dir.File("tunedbd.conf"));
    config << "# test config\n"
           << "finder = simulated\n"
           << "simulated = \"devices=2\"\n"
           << "socket = " << dir.File("ignored.sock") << "\n";
  }
  // The Daemon helper passes --socket, which must win over the file.
  DaemonProcess daemon(dir, {"--config", dir.File("tunedbd.conf")});
  auto stub = daemon.Connect();
  grpc::ClientContext ctx;
  v1::DevicesResponse devices;
  ASSERT_TRUE(stub->Devices(&ctx, v1::DevicesRequest(), &devices).ok());
  EXPECT_EQ(devices.finder(), "simulated");
  EXPECT_EQ(devices.devices_size(), 2);
  struct stat st;
  EXPECT_NE(stat(dir.File("ignored.sock").c_str(), &st), 0);
}

TEST(DaemonTest, BadFlagsExitWithAMessage) {
  TempDir dir;
  DaemonProcess daemon(dir, {"--finder", "bogus"});
  int status = daemon.Stop(0);  // just wait
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 0);
}

TEST(DaemonTest, AMissSearchPolicyOtherThanWhenIdleOrAtOnceIsRefused) {
  const std::pair<const char*, const char*> bad[] = {
      {"--miss-searches", "later"},
      {"--busy-percent", "0"},
      {"--idle-quiet", "-1"}};
  for (const auto& [flag, value] : bad) {
    TempDir dir;
    DaemonProcess daemon(dir, {flag, value});
    int status = daemon.Stop(0);  // just wait
    ASSERT_TRUE(WIFEXITED(status)) << flag;
    EXPECT_NE(WEXITSTATUS(status), 0) << flag;
  }
}

// The daemon's stats, or a default message when the call fails.
v1::StatsResponse Stats(v1::TuneDb::Stub* stub) {
  grpc::ClientContext ctx;
  v1::StatsResponse stats;
  (void)stub->Stats(&ctx, v1::StatsRequest(), &stats);
  return stats;
}

// An upgrade: records imported for cuDNN 9.14 on the simulated GPU model
// are made for the daemon's own 9.19 when it next starts, in the
// background, unless --revalidate-on-start is false.
TEST(DaemonTest, ARestartedDaemonRevalidatesAnOlderVersionsRecordsInTheBackground) {
  TempDir dir;
  std::vector<ProblemKey> old_keys;
  for (int64_t n = 1; n <= 3; ++n) {
    ProblemKey key = testing_util::TestKey(n);
    key.device.cudnn_version = 91400;
    old_keys.push_back(key);
  }
  {
    DaemonProcess daemon(dir, {"--finder", "simulated"});
    auto stub = daemon.Connect();
    ASSERT_TRUE(ImportKeys(stub.get(), old_keys));
    ASSERT_EQ(daemon.Stop(SIGTERM), 0);
  }
  {
    DaemonProcess daemon(
        dir, {"--finder", "simulated", "--revalidate-on-start", "false"});
    auto stub = daemon.Connect();
    absl::SleepFor(absl::Milliseconds(500));  // sim searches take < 1 ms
    EXPECT_EQ(Stats(stub.get()).records(), 3);
    ASSERT_EQ(daemon.Stop(SIGTERM), 0);
  }
  DaemonProcess daemon(dir, {"--finder", "simulated"});
  auto stub = daemon.Connect();
  v1::StatsResponse stats;
  for (int i = 0; i < 300; ++i) {
    stats = Stats(stub.get());
    if (stats.records() >= 6) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_EQ(stats.records(), 6);
  EXPECT_EQ(stats.revalidated(), 3);
  v1::TuneResponse resp;
  ASSERT_TRUE(Tune(stub.get(), 2, &resp).ok());
  EXPECT_FALSE(resp.searched());
  EXPECT_EQ(resp.record().revalidated_from_cudnn(), 91400);
}

}  // namespace
}  // namespace tunedb
