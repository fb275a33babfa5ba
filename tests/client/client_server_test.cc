// tunedb::Client against the real in-process daemon (simulated finder):
// background tuning, a daemon that restarts on the same socket, and a slow
// search under a tune-and-wait deadline.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "client_test_util.h"
#include "test_server.h"
#include "server/finder/simulated_finder.h"
#include "server/service/server.h"
#include "server/tuning/gpu_use.h"
#include "tunedb/client.h"

namespace tunedb {
namespace {

using client_test::MsSince;
using testing_util::TempDir;
using Clock = std::chrono::steady_clock;

using client_test::StartServer;

ProblemKey Key(const Server& server, int64_t n) {
  return testing_util::TestKey(
      n, 64, 64, const_cast<Server&>(server).core().devices().at(0).key);
}

// A client of `server` whose misses ask for predictions (2 s lookups).
std::unique_ptr<Client> PredictingClient(const Server& server) {
  ClientOptions o;
  o.address = server.address();
  o.lookup_deadline = absl::Seconds(2);
  o.predict_misses = true;
  return Client::Create(o).value();
}

HeuristicFn Heuristic() {
  return [](const ProblemKey&, const Constraints&) {
    return std::optional<AlgoResult>(testing_util::OkResult(0));
  };
}

// A client of `server` whose misses are answered by the heuristic (2 s
// lookups).
ClientOptions HeuristicClientOptions(const Server& server) {
  ClientOptions o;
  o.address = server.address();
  o.heuristic = Heuristic();
  o.lookup_deadline = absl::Seconds(2);
  return o;
}

// The fastest algorithm the simulated finder models for a problem.
int ModelBest(const ConvProblem& p) {
  return SimulatedFinder::Model(p).at(0).algo;
}

// A GPU that a program uses until told otherwise.
class SwitchedGpuUse final : public GpuUse {
 public:
  bool InUse(const DeviceInfo&) override { return busy.load(); }
  std::atomic<bool> busy{true};
};

TEST(ClientServerTest, BackgroundTuneThenCachedAnswer) {
  TempDir dir;
  auto server = StartServer(dir.File("d.sock"));
  ASSERT_NE(server, nullptr);
  ClientOptions o;
  o.address = server->address();
  o.heuristic = Heuristic();
  o.lookup_deadline = absl::Seconds(2);
  auto client = Client::Create(o).value();
  const ProblemKey key = Key(*server, 32);

  EXPECT_EQ(client->Get(key).source, Source::kHeuristic);
  ASSERT_TRUE(client->WaitForBackground(absl::Seconds(20)));
  Answer a = client->Get(key);
  EXPECT_EQ(a.source, Source::kCache);
  EXPECT_EQ(a.algo, ModelBest(key.problem));

  // A second client finds the stored record with one Lookup.
  auto other = Client::Create(o).value();
  a = other->Get(key);
  EXPECT_EQ(a.source, Source::kDaemon);
  EXPECT_EQ(a.algo, ModelBest(key.problem));
  server->Shutdown(absl::Seconds(1));
}

TEST(ClientServerTest, OnlyTheCallersOwnDaemonCallsCountAsItsWait) {
  TempDir dir;
  auto server = StartServer(dir.File("d.sock"));
  ASSERT_NE(server, nullptr);
  auto client = Client::Create(HeuristicClientOptions(*server)).value();
  const ProblemKey key = Key(*server, 32);
  EXPECT_EQ(client->Stats().daemon_wait_us, 0);

  // The miss's Lookup is the caller's wait; the search it queues is not.
  EXPECT_EQ(client->Get(key).source, Source::kHeuristic);
  const int64_t after_miss = client->Stats().daemon_wait_us;
  EXPECT_GT(after_miss, 0);
  ASSERT_TRUE(client->WaitForBackground(absl::Seconds(20)));
  EXPECT_EQ(client->Stats().background_tunes, 1);
  EXPECT_EQ(client->Get(key).source, Source::kCache);
  EXPECT_EQ(client->Stats().daemon_wait_us, after_miss);
  server->Shutdown(absl::Seconds(1));
}

TEST(ClientServerTest, GraphKeyGetsTheTunedEngineConfigWithItsPlan) {
  TempDir dir;
  auto server = StartServer(dir.File("d.sock"));
  ASSERT_NE(server, nullptr);
  ClientOptions o;
  o.address = server->address();
  o.lookup_deadline = absl::Seconds(2);
  auto client = Client::Create(o).value();
  ProblemKey key = Key(*server, 32);
  key.problem.api = ConvApi::kGraph;
  key.problem.alignment = 16;

  // A miss answers none (no heuristic for engine configs) and tunes in the
  // background; then the engine config comes from the daemon, then the
  // cache.
  EXPECT_EQ(client->GetEngine(key).source, Source::kNone);
  ASSERT_TRUE(client->WaitForBackground(absl::Seconds(20)));
  client->ClearCache();
  EngineAnswer a = client->GetEngine(key);
  ASSERT_EQ(a.source, Source::kDaemon);
  std::vector<AlgoResult> model = SimulatedFinder::Model(key.problem);
  SimulatedFinder::AsGraphResults(model);
  EXPECT_EQ(a.config.algo, model.at(0).algo);
  EXPECT_EQ(a.config.knobs, model.at(0).knobs);
  EXPECT_EQ(a.config.numerical_notes, model.at(0).numerical_notes);
  EXPECT_NE(a.config.plan.find("\"simulated\":true"), std::string::npos);
  a = client->GetEngine(key);
  EXPECT_EQ(a.source, Source::kCache);
  EXPECT_EQ(a.config.plan, model.at(0).plan);

  // The legacy key of the same convolution is a record of its own.
  ProblemKey legacy = key;
  legacy.problem.api = ConvApi::kLegacy;
  legacy.problem.alignment = 0;
  EXPECT_EQ(client->GetEngine(legacy).source, Source::kNone);
  server->Shutdown(absl::Seconds(1));
}

TEST(ClientServerTest, AGraphKeyNeverTunedGetsAPredictionAndIsTunedAllTheSame) {
  TempDir dir;
  auto server = StartServer(dir.File("d.sock"));
  ASSERT_NE(server, nullptr);
  auto client = PredictingClient(*server);
  ProblemKey tuned = Key(*server, 32);
  tuned.problem.api = ConvApi::kGraph;
  tuned.problem.alignment = 16;
  // Nothing of the family is stored: no prediction, as without the option.
  EXPECT_EQ(client->GetEngine(tuned).source, Source::kNone);
  ASSERT_TRUE(client->WaitForBackground(absl::Seconds(20)));

  // Batch 48 was never tuned: its nearest tuned shape (batch 32) answers.
  ProblemKey unseen = tuned;
  unseen.problem.n = 48;
  EngineAnswer a = client->GetEngine(unseen);
  ASSERT_EQ(a.source, Source::kPredicted);
  std::vector<AlgoResult> model = SimulatedFinder::Model(tuned.problem);
  SimulatedFinder::AsGraphResults(model);
  EXPECT_EQ(a.config.algo, model.at(0).algo);
  EXPECT_EQ(a.config.knobs, model.at(0).knobs);
  EXPECT_TRUE(a.config.plan.empty()) << "a plan is made for one shape";
  EXPECT_EQ(client->Stats().predicted_answers, 1);
  // The key itself was queued for a search: the next process (a cleared
  // cache) gets the measured answer.
  ASSERT_TRUE(client->WaitForBackground(absl::Seconds(20)));
  client->ClearCache();
  EXPECT_EQ(client->GetEngine(unseen).source, Source::kDaemon);
  server->Shutdown(absl::Seconds(1));
}

TEST(ClientServerTest, ALegacyKeyNeverTunedGetsAPredictionUntilItsOwnIsStored) {
  TempDir dir;
  auto server = StartServer(dir.File("d.sock"));
  ASSERT_NE(server, nullptr);
  auto client = PredictingClient(*server);
  const ProblemKey tuned = Key(*server, 32);
  EXPECT_EQ(client->Get(tuned).source, Source::kNone);  // nothing to predict
  ASSERT_TRUE(client->WaitForBackground(absl::Seconds(20)));

  ProblemKey unseen = tuned;
  unseen.problem.n = 48;
  const std::vector<AlgoResult> model = SimulatedFinder::Model(tuned.problem);
  Answer a = client->Get(unseen);
  ASSERT_EQ(a.source, Source::kPredicted);
  EXPECT_EQ(a.algo, model.at(0).algo);
  EXPECT_FALSE(a.tuned());
  EXPECT_EQ(client->Get(unseen).source, Source::kPredicted);  // cached
  EXPECT_EQ(client->Stats().predicted_answers, 2);
  // Its own search was queued; its answer replaces the prediction.
  ASSERT_TRUE(client->WaitForBackground(absl::Seconds(20)));
  a = client->Get(unseen);
  EXPECT_TRUE(a.tuned()) << SourceName(a.source);
  EXPECT_EQ(a.algo, SimulatedFinder::Model(unseen.problem).at(0).algo);
  server->Shutdown(absl::Seconds(1));
}

TEST(ClientServerTest, AfterAnUpgradeADefaultClientGetsTheOldVersionsChoiceUntilItsOwnIsStored) {
  TempDir dir;
  // The daemon makes the new version's record itself too: its start-up
  // revalidation plans every key stored under another version, and it may
  // read the store after the Put below. A program on the GPU holds that
  // search and the client's until the test lets them run.
  SwitchedGpuUse gpu;
  auto server = StartServer(dir.File("d.sock"), "", &gpu);
  ASSERT_NE(server, nullptr);
  const ProblemKey key = Key(*server, 32);
  Record old;
  old.key = key;
  old.key.device.cudnn_version = 91400;
  old.results = SimulatedFinder::Model(ConvProblem(key.problem));
  old.finder = "simulated";
  old.repeats = 3;
  ASSERT_TRUE(server->core().store().Put(old).ok());
  ClientOptions o;
  o.address = server->address();
  o.heuristic = Heuristic();
  o.lookup_deadline = absl::Seconds(2);
  {
    ClientOptions off = o;
    off.predict_from_other_versions = false;
    off.tune_misses = false;
    auto plain = Client::Create(off).value();
    EXPECT_EQ(plain->Get(key).source, Source::kHeuristic);
  }
  auto client = Client::Create(o).value();  // the defaults
  Answer a = client->Get(key);
  ASSERT_EQ(a.source, Source::kPredicted);
  EXPECT_EQ(a.algo, Choose(old, {})->algo);
  ASSERT_TRUE(client->WaitForBackground(absl::Seconds(20)));
  // Its own is stored once the GPU is idle.
  gpu.busy = false;
  bool stored = false;
  for (int i = 0; i < 2000 && !stored; ++i) {
    absl::StatusOr<std::optional<Record>> own =
        server->core().store().Get(key);
    ASSERT_TRUE(own.ok()) << own.status();
    stored = own->has_value();
    if (!stored) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(stored);
  client->ClearCache();
  a = client->Get(key);
  EXPECT_TRUE(a.tuned()) << SourceName(a.source);
  server->Shutdown(absl::Seconds(1));
}

TEST(ClientServerTest, RecoversWhenTheDaemonRestarts) {
  TempDir dir;
  const std::string socket = dir.File("r.sock");
  auto server = StartServer(socket);
  ASSERT_NE(server, nullptr);
  ClientOptions o;
  o.address = server->address();
  o.heuristic = Heuristic();
  o.miss_policy = MissPolicy::kTuneAndWait;
  o.tune_deadline = absl::Seconds(5);
  o.lookup_deadline = absl::Milliseconds(200);
  o.reconnect_backoff_min = absl::Milliseconds(50);
  o.reconnect_backoff_max = absl::Milliseconds(400);
  o.negative_ttl = absl::Milliseconds(100);
  auto client = Client::Create(o).value();
  EXPECT_EQ(client->Get(Key(*server, 1)).source, Source::kDaemon);
  const DeviceKey device = server->core().devices().at(0).key;

  // Down: answers come from the heuristic, fast.
  server->Shutdown(absl::Milliseconds(100));
  server.reset();
  for (int n = 2; n < 12; ++n) {
    auto start = Clock::now();
    Answer a = client->Get(testing_util::TestKey(n, 64, 64, device));
    EXPECT_EQ(a.source, Source::kHeuristic);
    EXPECT_LT(MsSince(start), 1000);
  }
  EXPECT_GE(client->Stats().daemon_errors, 1);
  // The cached answer survives the outage.
  EXPECT_EQ(client->Get(testing_util::TestKey(1, 64, 64, device)).source,
            Source::kCache);

  // Back on the same socket: the client reconnects on its own.
  server = StartServer(socket);
  ASSERT_NE(server, nullptr);
  auto start = Clock::now();
  Answer a;
  int n = 100;
  while (MsSince(start) < 10000) {
    a = client->Get(testing_util::TestKey(++n, 64, 64, device));
    if (a.source == Source::kDaemon) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(a.source, Source::kDaemon)
      << "not recovered after " << MsSince(start) << " ms";
  EXPECT_TRUE(client->DaemonReachable());
  server->Shutdown(absl::Seconds(1));
}

TEST(ClientServerTest, SlowSearchFallsBackWithinTheTuneDeadline) {
  TempDir dir;
  auto server = StartServer(dir.File("s.sock"), "slow_ms=3000");
  ASSERT_NE(server, nullptr);
  ClientOptions o;
  o.address = server->address();
  o.heuristic = Heuristic();
  o.miss_policy = MissPolicy::kTuneAndWait;
  o.tune_deadline = absl::Milliseconds(150);
  auto client = Client::Create(o).value();
  const ProblemKey key = Key(*server, 7);

  auto start = Clock::now();
  Answer a = client->Get(key);
  const double ms = MsSince(start);
  EXPECT_EQ(a.source, Source::kHeuristic);
  EXPECT_GE(ms, 140);
  EXPECT_LT(ms, 1500) << "Get waited for the 3 s search, past its 150 ms "
                         "deadline";

  // The search finishes in the daemon; the background Tune brings it in.
  ASSERT_TRUE(client->WaitForBackground(absl::Seconds(20)));
  a = client->Get(key);
  EXPECT_EQ(a.source, Source::kCache);
  EXPECT_EQ(a.algo, ModelBest(key.problem));
  server->Shutdown(absl::Seconds(1));
}

TEST(ClientServerTest, ABackgroundTuneAskedPastItsDeadlineJoinsTheSameSearch) {
  TempDir dir;
  auto server = StartServer(dir.File("s.sock"), "slow_ms=2000");
  ASSERT_NE(server, nullptr);
  ClientOptions o;
  o.address = server->address();
  o.heuristic = Heuristic();
  o.lookup_deadline = absl::Seconds(2);
  o.background_tune_deadline = absl::Milliseconds(300);
  auto client = Client::Create(o).value();
  const ProblemKey key = Key(*server, 9);

  EXPECT_EQ(client->Get(key).source, Source::kHeuristic);
  // Seven or so calls of 300 ms: each past its deadline, none a failure.
  ASSERT_TRUE(client->WaitForBackground(absl::Seconds(20)));
  EXPECT_EQ(client->Stats().daemon_errors, 0);
  Answer a = client->Get(key);
  EXPECT_EQ(a.source, Source::kCache);
  EXPECT_EQ(a.algo, ModelBest(key.problem));
  const CoreStats stats = server->core().Stats();
  EXPECT_EQ(stats.searches, 1);
  EXPECT_GE(stats.coalesced, 1);
  server->Shutdown(absl::Seconds(1));
}

TEST(ClientServerTest, AProgramsMissesAreAllQueuedWhileItsGpuIsBusyNotOnePerDeadline) {
  TempDir dir;
  SwitchedGpuUse gpu;
  auto server = StartServer(dir.File("i.sock"), "", &gpu);
  ASSERT_NE(server, nullptr);
  ClientOptions o = HeuristicClientOptions(*server);
  // Were each miss's Tune to wait for its search, five would take minutes.
  o.background_tune_deadline = absl::Seconds(60);
  auto client = Client::Create(o).value();
  Constraints capped;
  capped.max_workspace_bytes = 0;
  for (int64_t n = 1; n <= 5; ++n) {
    EXPECT_EQ(client->Get(Key(*server, n)).source, Source::kHeuristic);
    // The same key under other constraints: its search is the same one.
    EXPECT_EQ(client->Get(Key(*server, n), capped).source, Source::kHeuristic);
  }
  ASSERT_TRUE(client->WaitForBackground(absl::Seconds(20)));
  EXPECT_EQ(client->Stats().background_held, 5);
  EXPECT_EQ(client->Stats().daemon_errors, 0);
  EXPECT_EQ(server->core().Stats().searches, 0);
  EXPECT_EQ(server->core().Stats().waited_for_idle, 5);
  EXPECT_EQ(server->core().Stats().coalesced, 0);  // one Tune per key
  // Once the GPU is idle all five are searched and stored: another process
  // finds each with one Lookup.
  gpu.busy = false;
  for (int i = 0; i < 2000 && server->core().Stats().searches < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(server->core().Stats().searches, 5);
  auto other = Client::Create(o).value();
  for (int64_t n = 1; n <= 5; ++n) {
    EXPECT_EQ(other->Get(Key(*server, n)).source, Source::kDaemon) << n;
  }
  server->Shutdown(absl::Seconds(1));
}

TEST(ClientServerTest, AHeldKeyIsAskedForAgainAfterTheRefreshInterval) {
  // A held search may be lost (the daemon restarts before it runs): the
  // client does not give the key up for good.
  TempDir dir;
  SwitchedGpuUse gpu;
  auto server = StartServer(dir.File("h.sock"), "", &gpu);
  ASSERT_NE(server, nullptr);
  ClientOptions o = HeuristicClientOptions(*server);
  o.negative_ttl = absl::Milliseconds(50);
  o.refresh_interval = absl::Seconds(2);
  auto client = Client::Create(o).value();
  const ProblemKey key = Key(*server, 3);
  EXPECT_EQ(client->Get(key).source, Source::kHeuristic);
  ASSERT_TRUE(client->WaitForBackground(absl::Seconds(20)));
  ASSERT_EQ(client->Stats().background_held, 1);
  // Within the interval a new miss of the key asks nothing.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(client->Get(key).source, Source::kHeuristic);
  ASSERT_TRUE(client->WaitForBackground(absl::Seconds(20)));
  EXPECT_EQ(client->Stats().background_held, 1);
  // After it, the key is asked for again (and held again).
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  EXPECT_EQ(client->Get(key).source, Source::kHeuristic);
  ASSERT_TRUE(client->WaitForBackground(absl::Seconds(20)));
  EXPECT_EQ(client->Stats().background_held, 2);
  server->Shutdown(absl::Seconds(1));
}

}  // namespace
}  // namespace tunedb
