// tunedb::Client against FakeTuneDb: every miss policy, negative entries,
// refresh, eviction, a daemon that is absent or slow, backoff, concurrency.
#include "tunedb/client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "client_test_util.h"
#include "common/sealed_plan.h"
#include "store/store.h"

namespace tunedb {
namespace {

using client_test::FakeDaemon;
using client_test::MsSince;
using std::chrono::milliseconds;
using testing_util::OkResult;
using testing_util::TempDir;
using testing_util::TestKey;
using Clock = std::chrono::steady_clock;

HeuristicFn FixedHeuristic(int algo) {
  return [algo](const ProblemKey&, const Constraints&) {
    return std::optional<AlgoResult>(OkResult(algo, 77, MathType::kFma));
  };
}

class ClientTest : public ::testing::Test {
 protected:
  ClientTest() : daemon_(dir_.File("fake.sock")) {}

  ClientOptions Options(MissPolicy policy) {
    ClientOptions o;
    o.address = daemon_.address();
    o.miss_policy = policy;
    o.lookup_deadline = absl::Seconds(2);
    o.heuristic = FixedHeuristic(42);
    o.reconnect_backoff_min = absl::Milliseconds(50);
    o.reconnect_backoff_max = absl::Milliseconds(200);
    return o;
  }
  std::unique_ptr<Client> Make(const ClientOptions& o) {
    absl::StatusOr<std::unique_ptr<Client>> c = Client::Create(o);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? *std::move(c) : nullptr;
  }

  TempDir dir_;
  FakeDaemon daemon_;
};

TEST_F(ClientTest, CreateRejectsBadOptions) {
  ClientOptions o;
  o.cache_capacity = -1;
  EXPECT_EQ(Client::Create(o).status().code(),
            absl::StatusCode::kInvalidArgument);
  o = ClientOptions();
  o.reconnect_backoff_min = absl::Seconds(2);
  o.reconnect_backoff_max = absl::Seconds(1);
  EXPECT_EQ(Client::Create(o).status().code(),
            absl::StatusCode::kInvalidArgument);
  o = ClientOptions();
  o.address = "";
  EXPECT_EQ(Client::Create(o).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(ClientTest, CacheOnlyMissIsNoneAtOnceAndPrefetchFillsIt) {
  ASSERT_TRUE(daemon_.ok());
  const ProblemKey key = TestKey(8);
  daemon_.service().Put(key, {OkResult(5, 1024, MathType::kTensorOp)});
  auto client = Make(Options(MissPolicy::kCacheOnly));

  Answer a = client->Get(key);
  EXPECT_EQ(a.source, Source::kNone);
  EXPECT_FALSE(a.ok());
  EXPECT_EQ(daemon_.service().lookups() + daemon_.service().tunes(), 0);

  EXPECT_TRUE(client->Prefetch(key));
  ASSERT_TRUE(client->WaitForBackground(absl::Seconds(10)));
  a = client->Get(key);
  EXPECT_EQ(a.source, Source::kCache);
  EXPECT_EQ(a.algo, 5);
  EXPECT_EQ(a.math_type, MathType::kTensorOp);
  EXPECT_EQ(a.workspace_bytes, 1024);
}

TEST_F(ClientTest, AStoredPlanReachesTheCallerOnlyWholeAndForItsOwnKey) {
  ProblemKey key = TestKey(8);
  key.problem.api = ConvApi::kGraph;
  key.problem.alignment = 16;
  const std::string raw = "{\"serialized\":\"plan\"}";
  const std::string sealed = SealPlan(key, 57, {}, raw);
  ProblemKey other = key;
  other.problem.n += 1;
  const std::string cases[] = {
      sealed.substr(0, sealed.size() - 1),      // cut short
      sealed.substr(0, sealed.size() - 2) + "]}",  // edited
      SealPlan(other, 57, {}, raw),             // another key's
      raw};                                     // never sealed
  auto client = Make(Options(MissPolicy::kBackground));
  int64_t refused = 0;
  for (const std::string& plan : cases) {
    AlgoResult r = OkResult(57, 4096, MathType::kTensorOp);
    r.plan = plan;
    daemon_.service().Put(key, {r});
    client->ClearCache();
    const EngineAnswer a = client->GetEngine(key);
    ASSERT_EQ(a.source, Source::kDaemon);
    EXPECT_EQ(a.config.algo, 57);  // the config is still given, to build
    EXPECT_TRUE(a.config.plan.empty()) << plan;
    EXPECT_EQ(client->Stats().plans_refused, ++refused);
  }
  AlgoResult whole = OkResult(57, 4096, MathType::kTensorOp);
  whole.plan = sealed;
  daemon_.service().Put(key, {whole});
  client->ClearCache();
  EXPECT_EQ(client->GetEngine(key).config.plan, raw);
  EXPECT_EQ(client->Stats().plans_refused, refused);
}

TEST_F(ClientTest, BackgroundStoredRecordComesFromDaemonThenCache) {
  const ProblemKey key = TestKey(8);
  daemon_.service().Put(key, {OkResult(3, 4096)});
  auto client = Make(Options(MissPolicy::kBackground));

  Answer a = client->Get(key);
  EXPECT_EQ(a.source, Source::kDaemon);
  EXPECT_EQ(a.algo, 3);
  EXPECT_EQ(a.workspace_bytes, 4096);
  a = client->Get(key);
  EXPECT_EQ(a.source, Source::kCache);
  EXPECT_EQ(a.algo, 3);
  EXPECT_EQ(daemon_.service().lookups(), 1);
  EXPECT_EQ(daemon_.service().tunes(), 0);
  ClientStats s = client->Stats();
  EXPECT_EQ(s.gets, 2);
  EXPECT_EQ(s.hits, 1);
  EXPECT_EQ(s.misses, 1);
  EXPECT_EQ(s.daemon_answers, 1);
  EXPECT_EQ(s.cache_entries, 1);
}

TEST_F(ClientTest, BackgroundMissAnswersHeuristicThenTunedAnswer) {
  daemon_.service().set_tune_delay(milliseconds(1500));
  daemon_.service().set_tune_result([](const ProblemKey&) {
    return std::optional<std::vector<AlgoResult>>({OkResult(6, 0)});
  });
  auto client = Make(Options(MissPolicy::kBackground));
  const ProblemKey key = TestKey(16);

  auto start = Clock::now();
  Answer a = client->Get(key);
  EXPECT_LT(MsSince(start), 750) << "the launch must not wait for the search";
  EXPECT_EQ(a.source, Source::kHeuristic);
  EXPECT_EQ(a.algo, 42);
  EXPECT_EQ(a.math_type, MathType::kFma);
  EXPECT_EQ(a.workspace_bytes, 77);
  // Until the search is back, the cached heuristic answers.
  EXPECT_EQ(client->Get(key).source, Source::kHeuristic);

  ASSERT_TRUE(client->WaitForBackground(absl::Seconds(10)));
  a = client->Get(key);
  EXPECT_EQ(a.source, Source::kCache);
  EXPECT_EQ(a.algo, 6);
  EXPECT_EQ(daemon_.service().tunes(), 1);
  ClientStats s = client->Stats();
  EXPECT_EQ(s.background_tunes, 1);
  EXPECT_EQ(s.fallbacks, 2);
}

TEST_F(ClientTest, BackgroundWithoutHeuristicAnswersNone) {
  ClientOptions o = Options(MissPolicy::kBackground);
  o.heuristic = nullptr;
  auto client = Make(o);
  const ProblemKey key = TestKey(17);
  EXPECT_EQ(client->Get(key).source, Source::kNone);
  ASSERT_TRUE(client->WaitForBackground(absl::Seconds(10)));
  EXPECT_EQ(client->Get(key).source, Source::kCache);
  EXPECT_EQ(client->Stats().none_answers, 1);
}

TEST_F(ClientTest, BackgroundWithTuneMissesOffOnlyLooksMissesUp) {
  ClientOptions o = Options(MissPolicy::kBackground);
  o.tune_misses = false;
  auto client = Make(o);
  const ProblemKey key = TestKey(19);
  EXPECT_EQ(client->Get(key).source, Source::kHeuristic);
  ProblemKey graph = TestKey(20);
  graph.problem.api = ConvApi::kGraph;
  graph.problem.alignment = 16;
  EXPECT_EQ(client->GetEngine(graph).source, Source::kNone);
  ASSERT_TRUE(client->WaitForBackground(absl::Seconds(10)));
  EXPECT_EQ(daemon_.service().lookups(), 2);
  EXPECT_EQ(daemon_.service().tunes(), 0);
  EXPECT_EQ(client->Stats().background_enqueued, 0);
}

TEST_F(ClientTest, BackgroundWithZeroLookupDeadlineMakesNoCallOnTheLaunch) {
  ClientOptions o = Options(MissPolicy::kBackground);
  o.lookup_deadline = absl::ZeroDuration();
  const ProblemKey key = TestKey(18);
  daemon_.service().Put(key, {OkResult(2)});
  daemon_.service().set_lookup_delay(milliseconds(1500));
  auto client = Make(o);
  auto start = Clock::now();
  EXPECT_EQ(client->Get(key).source, Source::kHeuristic);
  EXPECT_LT(MsSince(start), 750);
  ASSERT_TRUE(client->WaitForBackground(absl::Seconds(10)));
  EXPECT_EQ(client->Get(key).algo, 2);
  EXPECT_EQ(daemon_.service().lookups(), 0);
}

TEST_F(ClientTest, TuneAndWaitReturnsTheSearchedAnswer) {
  auto client = Make(Options(MissPolicy::kTuneAndWait));
  const ProblemKey key = TestKey(9);
  Answer a = client->Get(key);
  EXPECT_EQ(a.source, Source::kDaemon);
  EXPECT_EQ(a.algo, 1);
  EXPECT_EQ(client->Get(key).source, Source::kCache);
  EXPECT_EQ(daemon_.service().tunes(), 1);
}

TEST_F(ClientTest, TuneAndWaitPastItsDeadlineFallsBackThenGetsTheAnswer) {
  daemon_.service().set_tune_delay(milliseconds(2500));
  ClientOptions o = Options(MissPolicy::kTuneAndWait);
  o.tune_deadline = absl::Milliseconds(100);
  // This test daemon starts a new 2.5 s search on every call (the real one
  // lets a retry join the search): the background Tune must outwait one.
  o.background_tune_deadline = absl::Seconds(5);
  auto client = Make(o);
  const ProblemKey key = TestKey(10);

  auto start = Clock::now();
  Answer a = client->Get(key);
  const double ms = MsSince(start);
  EXPECT_EQ(a.source, Source::kHeuristic);
  EXPECT_GE(ms, 90);
  EXPECT_LT(ms, 1200) << "Get must return near its 100 ms deadline, not "
                         "after the 2.5 s search";
  EXPECT_EQ(client->Stats().daemon_errors, 1);

  ASSERT_TRUE(client->WaitForBackground(absl::Seconds(10)));
  a = client->Get(key);
  EXPECT_EQ(a.source, Source::kCache);
  EXPECT_EQ(a.algo, 1);
}

TEST_F(ClientTest, ConstraintsAreDistinctEntries) {
  const ProblemKey key = TestKey(11);
  AlgoResult fast = OkResult(7, 1 << 20);
  fast.launch.median_ms = 0.5;  // faster, but needs workspace
  daemon_.service().Put(key, {fast, OkResult(0, 0)});
  auto client = Make(Options(MissPolicy::kBackground));
  Constraints none;
  Constraints small;
  small.max_workspace_bytes = 1000;
  EXPECT_EQ(client->Get(key, none).algo, 7);
  EXPECT_EQ(client->Get(key, small).algo, 0);
  EXPECT_EQ(client->Get(key, none).source, Source::kCache);
  EXPECT_EQ(client->Get(key, small).source, Source::kCache);
  EXPECT_EQ(client->Get(key, none).algo, 7);
  EXPECT_EQ(client->Get(key, small).algo, 0);
}

TEST_F(ClientTest, ClientLaunchModeRanksEveryCallWhateverItsConstraints) {
  const ProblemKey key = TestKey(12);
  AlgoResult host_heavy = OkResult(1);  // slow to call, fast on the GPU
  host_heavy.launch.median_ms = 0.114;
  host_heavy.gpu.median_ms = 0.003;
  AlgoResult gpu_bound = OkResult(0);
  gpu_bound.launch.median_ms = 0.040;
  gpu_bound.gpu.median_ms = 0.039;
  daemon_.service().Put(key, {gpu_bound, host_heavy});

  ClientOptions graphs = Options(MissPolicy::kBackground);
  graphs.launch_mode = LaunchMode::kGraph;
  auto capturing = Make(graphs);
  EXPECT_EQ(capturing->Get(key).algo, 1);  // default Constraints say kDirect
  EXPECT_EQ(capturing->Get(key).source, Source::kCache);
  EXPECT_EQ(capturing->Get(key).algo, 1);

  auto direct = Make(Options(MissPolicy::kBackground));
  EXPECT_EQ(direct->Get(key).algo, 0);
  Constraints graph;
  graph.launch_mode = LaunchMode::kGraph;
  EXPECT_EQ(direct->Get(key, graph).algo, 1);
}

TEST_F(ClientTest, NegativeEntryLivesForItsTtl) {
  // The daemon has no record and cannot search (wrong GPU).
  daemon_.service().set_tune_result(
      [](const ProblemKey&) { return std::nullopt; });
  ClientOptions o = Options(MissPolicy::kBackground);
  o.negative_ttl = absl::Milliseconds(300);
  auto client = Make(o);
  const ProblemKey key = TestKey(12);

  EXPECT_EQ(client->Get(key).source, Source::kHeuristic);
  ASSERT_TRUE(client->WaitForBackground(absl::Seconds(10)));
  EXPECT_EQ(daemon_.service().lookups(), 1);
  // Within the TTL: answered from the cache, no new RPC.
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(client->Get(key).source, Source::kHeuristic);
  }
  EXPECT_EQ(daemon_.service().lookups(), 1);
  std::this_thread::sleep_for(milliseconds(400));
  EXPECT_EQ(client->Get(key).source, Source::kHeuristic);
  EXPECT_EQ(daemon_.service().lookups(), 2);
}

TEST_F(ClientTest, RecordWithNoFittingAlgorithmIsNegative) {
  const ProblemKey key = TestKey(13);
  daemon_.service().Put(key, {OkResult(7, 1 << 20)});
  ClientOptions o = Options(MissPolicy::kBackground);
  o.heuristic = nullptr;
  o.negative_ttl = absl::Seconds(30);
  auto client = Make(o);
  Constraints tiny;
  tiny.max_workspace_bytes = 0;
  EXPECT_EQ(client->Get(key, tiny).source, Source::kNone);
  EXPECT_EQ(client->Get(key, tiny).source, Source::kNone);
  EXPECT_EQ(daemon_.service().lookups(), 1);
}

TEST_F(ClientTest, RefreshPicksUpAChangedRecord) {
  const ProblemKey key = TestKey(14);
  daemon_.service().Put(key, {OkResult(1)}, /*measured_at_us=*/1000);
  ClientOptions o = Options(MissPolicy::kBackground);
  o.refresh_interval = absl::Milliseconds(100);
  auto client = Make(o);
  EXPECT_EQ(client->Get(key).algo, 1);

  daemon_.service().Put(key, {OkResult(4)}, /*measured_at_us=*/2000);
  EXPECT_EQ(client->Get(key).algo, 1);  // fresh: served without a re-check
  std::this_thread::sleep_for(milliseconds(150));
  Answer stale = client->Get(key);  // past the interval: still served...
  EXPECT_EQ(stale.source, Source::kCache);
  EXPECT_EQ(stale.algo, 1);
  ASSERT_TRUE(client->WaitForBackground(absl::Seconds(10)));  // ...re-checked
  Answer fresh = client->Get(key);
  EXPECT_EQ(fresh.source, Source::kCache);
  EXPECT_EQ(fresh.algo, 4);
  EXPECT_EQ(client->Stats().refreshes, 1);
  EXPECT_EQ(daemon_.service().lookups(), 2);
}

TEST_F(ClientTest, CacheStaysWithinCapacity) {
  daemon_.service().set_tune_result([](const ProblemKey& k) {
    return std::optional<std::vector<AlgoResult>>(
        {OkResult(static_cast<int>(k.problem.n % 8))});
  });
  ClientOptions o = Options(MissPolicy::kTuneAndWait);
  o.cache_capacity = 16;
  auto client = Make(o);
  for (int n = 1; n <= 100; ++n) {
    Answer a = client->Get(TestKey(n));
    ASSERT_EQ(a.source, Source::kDaemon);
    ASSERT_EQ(a.algo, n % 8);
  }
  ClientStats s = client->Stats();
  EXPECT_LE(s.cache_entries, 16);
  EXPECT_GE(s.evictions, 84);
  // The most recent key is still cached.
  EXPECT_EQ(client->Get(TestKey(100)).source, Source::kCache);
}

TEST_F(ClientTest, DisabledCacheGoesToTheDaemonEveryTime) {
  const ProblemKey key = TestKey(15);
  daemon_.service().Put(key, {OkResult(2)});
  ClientOptions o = Options(MissPolicy::kBackground);
  o.cache_capacity = 0;
  auto client = Make(o);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(client->Get(key).source, Source::kDaemon);
  EXPECT_EQ(daemon_.service().lookups(), 5);
  EXPECT_EQ(client->Stats().cache_entries, 0);
}

TEST_F(ClientTest, ClearCacheDropsEntries) {
  const ProblemKey key = TestKey(19);
  daemon_.service().Put(key, {OkResult(2)});
  auto client = Make(Options(MissPolicy::kBackground));
  EXPECT_EQ(client->Get(key).source, Source::kDaemon);
  EXPECT_EQ(client->Get(key).source, Source::kCache);
  client->ClearCache();
  EXPECT_EQ(client->Stats().cache_entries, 0);
  EXPECT_EQ(client->Get(key).source, Source::kDaemon);
}

TEST_F(ClientTest, SlowLookupFallsBackWithinItsDeadline) {
  const ProblemKey key = TestKey(20);
  daemon_.service().Put(key, {OkResult(2)});
  daemon_.service().set_lookup_delay(milliseconds(2500));
  ClientOptions o = Options(MissPolicy::kBackground);
  o.lookup_deadline = absl::Milliseconds(30);
  auto client = Make(o);
  auto start = Clock::now();
  Answer a = client->Get(key);
  EXPECT_LT(MsSince(start), 1200);
  EXPECT_EQ(a.source, Source::kHeuristic);
  EXPECT_EQ(client->Stats().daemon_errors, 1);
}

TEST(ClientNoDaemonTest, AbsentDaemonFallsBackFastAndBacksOff) {
  TempDir dir;
  ClientOptions o;
  o.address = "unix:" + dir.File("nobody-listens.sock");
  o.heuristic = FixedHeuristic(42);
  o.cache_capacity = 0;  // every Get takes the miss path
  o.reconnect_backoff_min = absl::Milliseconds(300);
  o.reconnect_backoff_max = absl::Seconds(1);
  auto client = *Client::Create(o);

  auto start = Clock::now();
  Answer a = client->Get(TestKey(1));
  EXPECT_LT(MsSince(start), 500);
  EXPECT_EQ(a.source, Source::kHeuristic);
  EXPECT_EQ(a.algo, 42);
  EXPECT_FALSE(client->DaemonReachable());

  // Many misses during the backoff make no RPC at all.
  start = Clock::now();
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(client->Get(TestKey(2 + i)).source, Source::kHeuristic);
  }
  const double loop_ms = MsSince(start);
  ClientStats s = client->Stats();
  if (loop_ms < 200) {
    // Entirely inside the first backoff (>= 240 ms with jitter): only the
    // first Get called, and the background worker is still waiting.
    EXPECT_EQ(s.daemon_calls, 1);
  }
  EXPECT_GE(s.daemon_skipped, 900);
  EXPECT_GE(s.daemon_errors, 1);
  EXPECT_EQ(s.fallbacks, 1001);
}

TEST(ClientNoDaemonTest, DaemonDownAnswersFromItsDatabaseFile) {
  TempDir dir;
  const std::string db_path = dir.File("tunedb.db");
  const ProblemKey stored = TestKey(5);
  {
    Store::Options so;
    so.path = db_path;
    auto store = Store::Open(so);
    ASSERT_TRUE(store.ok()) << store.status();
    Record r;
    r.key = stored;
    r.results = {OkResult(6, 512, MathType::kTensorOp)};
    r.measured_at_us = 1234;
    r.finder = "simulated";
    ASSERT_TRUE((*store)->Put(r).ok());
  }
  ClientOptions o;
  o.address = "unix:" + dir.File("down.sock");
  o.heuristic = FixedHeuristic(42);
  o.db_path = db_path;
  auto client = *Client::Create(o);
  // The worker opens the file in the background.
  for (int i = 0; i < 200 && !client->Stats().database_open; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  ASSERT_TRUE(client->Stats().database_open);

  Answer a = client->Get(stored);
  EXPECT_EQ(a.source, Source::kDatabase);
  EXPECT_TRUE(a.tuned());
  EXPECT_EQ(a.algo, 6);
  EXPECT_EQ(a.math_type, MathType::kTensorOp);
  EXPECT_EQ(a.workspace_bytes, 512);
  EXPECT_EQ(client->Get(stored).source, Source::kCache);
  // Not in the file: the heuristic.
  EXPECT_EQ(client->Get(TestKey(6)).source, Source::kHeuristic);
  // A workspace limit nothing stored meets: the heuristic too.
  Constraints none_fit;
  none_fit.max_workspace_bytes = 0;
  EXPECT_EQ(client->Get(stored, none_fit).source, Source::kHeuristic);
  EXPECT_EQ(client->Stats().database_answers, 1);
}

TEST(ClientNoDaemonTest, UnreadableDatabaseFileIsIgnored) {
  TempDir dir;
  ClientOptions o;
  o.address = "unix:" + dir.File("down.sock");
  o.heuristic = FixedHeuristic(42);
  o.db_path = dir.File("missing/none.db");
  auto client = *Client::Create(o);
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_FALSE(client->Stats().database_open);
  EXPECT_EQ(client->Get(TestKey(1)).source, Source::kHeuristic);
}

TEST(ClientNoDaemonTest, DestroyingWithQueuedWorkIsPrompt) {
  TempDir dir;
  ClientOptions o;
  o.address = "unix:" + dir.File("none.sock");
  o.reconnect_backoff_min = absl::Seconds(5);
  o.reconnect_backoff_max = absl::Seconds(5);
  auto client = *Client::Create(o);
  for (int i = 0; i < 50; ++i) client->Get(TestKey(1 + i));
  auto start = Clock::now();
  client.reset();
  EXPECT_LT(MsSince(start), 1000);
}

TEST_F(ClientTest, BackgroundQueueIsBounded) {
  daemon_.service().set_tune_delay(milliseconds(200));
  ClientOptions o = Options(MissPolicy::kCacheOnly);
  o.background_queue_capacity = 4;
  auto client = Make(o);
  int queued = 0;
  for (int n = 1; n <= 20; ++n) queued += client->Prefetch(TestKey(n)) ? 1 : 0;
  EXPECT_LE(queued, 5);  // 4 waiting plus possibly one already running
  EXPECT_GE(client->Stats().background_dropped, 15);
}

TEST_F(ClientTest, ConcurrentReadersSeeOnlyConsistentAnswers) {
  // Each key's algorithm is a function of the key; with a tiny cache the
  // writers (misses) constantly replace the entries the readers read.
  daemon_.service().set_tune_result([](const ProblemKey& k) {
    return std::optional<std::vector<AlgoResult>>(
        {OkResult(static_cast<int>(k.problem.n % 7), k.problem.n * 100)});
  });
  ClientOptions o = Options(MissPolicy::kTuneAndWait);
  o.cache_capacity = 8;
  auto client = Make(o);
  constexpr int kKeys = 24;
  std::vector<ProblemKey> keys;
  for (int n = 1; n <= kKeys; ++n) keys.push_back(TestKey(n));
  std::atomic<int> bad{0};
  std::atomic<int64_t> cached{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 3000; ++i) {
        const ProblemKey& key = keys[(i * 7 + t * 5) % kKeys];
        Answer a = client->Get(key);
        if (a.source == Source::kCache) ++cached;
        if (a.algo != key.problem.n % 7 ||
            a.workspace_bytes != key.problem.n * 100) {
          ++bad;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(cached.load(), 0);
}

TEST(SourceNameTest, Names) {
  EXPECT_EQ(SourceName(Source::kNone), "none");
  EXPECT_EQ(SourceName(Source::kCache), "cache");
  EXPECT_EQ(SourceName(Source::kDaemon), "daemon");
  EXPECT_EQ(SourceName(Source::kHeuristic), "heuristic");
  EXPECT_EQ(SourceName(Source::kDatabase), "database");
  EXPECT_EQ(SourceName(Source::kPredicted), "predicted");
}

}  // namespace
}  // namespace tunedb
