// TuningCore over an in-memory store and the simulated finder.
#include "server/tuning/tuning_core.h"

#include <sqlite3.h>

#include <atomic>
#include <algorithm>
#include <cmath>
#include <functional>
#include <future>
#include <set>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/record_results.h"
#include "common/sealed_plan.h"
#include "gtest/gtest.h"
#include "server/finder/simulated_finder.h"
#include "server/tuning/revalidation.h"
#include "server/tuning/search_again.h"
#include "tests/server/test_util.h"

namespace tunedb {
namespace {

using testing_util::TestProblem;

// The simulated finder, with the stored plans and the configs to re-time
// each search was given kept.
class RecordingFinder final : public Finder {
 public:
  explicit RecordingFinder(Finder* inner) : inner_(inner) {}
  std::string Name() const override { return inner_->Name(); }
  absl::StatusOr<std::vector<DeviceInfo>> Devices() override {
    return inner_->Devices();
  }
  absl::StatusOr<SearchResult> Search(int device_index,
                                      const ConvProblem& problem,
                                      const SearchOptions& options) override {
    {
      absl::MutexLock lock(&mu_);
      stored_plans_.push_back(options.stored_plans);
      retime_only_.push_back(options.retime_only);
      far_behind_.push_back(options.far_behind);
    }
    absl::StatusOr<SearchResult> found =
        inner_->Search(device_index, problem, options);
    absl::MutexLock lock(&mu_);
    returned_.push_back(found.ok() ? found->results.size() : 0);
    return found;
  }
  // The stored plans of each search so far, in order.
  std::vector<std::vector<AlgoResult>> stored_plans() const {
    absl::MutexLock lock(&mu_);
    return stored_plans_;
  }
  // The configs each search so far was to re-time only, in order.
  std::vector<std::vector<AlgoResult>> retime_only() const {
    absl::MutexLock lock(&mu_);
    return retime_only_;
  }
  // The configs each search so far was not to run, in order.
  std::vector<std::vector<AlgoResult>> far_behind() const {
    absl::MutexLock lock(&mu_);
    return far_behind_;
  }
  // How many results each search so far returned, in order.
  std::vector<size_t> returned() const {
    absl::MutexLock lock(&mu_);
    return returned_;
  }

 private:
  Finder* const inner_;
  mutable absl::Mutex mu_;
  std::vector<std::vector<AlgoResult>> stored_plans_ ABSL_GUARDED_BY(mu_);
  std::vector<std::vector<AlgoResult>> retime_only_ ABSL_GUARDED_BY(mu_);
  std::vector<std::vector<AlgoResult>> far_behind_ ABSL_GUARDED_BY(mu_);
  std::vector<size_t> returned_ ABSL_GUARDED_BY(mu_);
};

// A GPU-use test double: which device ordinals a "program" uses, and how
// often each was asked.
class FakeGpuUse final : public GpuUse {
 public:
  bool InUse(const DeviceInfo& device) override {
    absl::MutexLock lock(&mu_);
    ++asked_;
    return busy_.count(device.ordinal) > 0;
  }
  void Set(int ordinal, bool busy) {
    absl::MutexLock lock(&mu_);
    if (busy) {
      busy_.insert(ordinal);
    } else {
      busy_.erase(ordinal);
    }
  }
  int asked() const {
    absl::MutexLock lock(&mu_);
    return asked_;
  }

 private:
  mutable absl::Mutex mu_;
  std::set<int> busy_ ABSL_GUARDED_BY(mu_);
  int asked_ ABSL_GUARDED_BY(mu_) = 0;
};

// TestProblem(n) as a graph-API problem.
ConvProblem GraphProblem(int64_t n) {
  ConvProblem p = TestProblem(n);
  p.api = ConvApi::kGraph;
  p.alignment = 16;
  return p;
}

class TuningCoreTest : public testing::Test {
 protected:
  void Start(const std::string& sim, TuningCore::Options options = {}) {
    Store::Options so;
    so.path = db_path_;
    auto store = Store::Open(so);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    auto o = SimulatedFinder::Options::Parse(sim);
    ASSERT_TRUE(o.ok()) << o.status();
    finder_ = std::make_unique<SimulatedFinder>(*o);
    recording_ = std::make_unique<RecordingFinder>(finder_.get());
    options.flush_interval = absl::Milliseconds(20);
    auto core = TuningCore::Create(options, store_.get(), recording_.get());
    ASSERT_TRUE(core.ok()) << core.status();
    core_ = std::move(*core);
  }
  void TearDown() override {
    if (core_) core_->Shutdown(absl::Seconds(5));
  }

  absl::StatusOr<TuneAnswer> Tune(const ConvProblem& p,
                                  absl::Duration timeout = absl::Seconds(30),
                                  bool force = false, Constraints c = {}) {
    return core_->Tune(p, std::nullopt, c, TuneMode{force},
                       absl::Now() + timeout);
  }

  // Lookup of `p` on the first device, as the service calls it.
  absl::StatusOr<LookupAnswer> Lookup(const ConvProblem& p) {
    absl::StatusOr<ValidKey> key =
        ValidKey::Make(ProblemKey{core_->devices()[0].key, p});
    if (!key.ok()) return key.status();
    return core_->Lookup(*key, {});
  }

  // That the last search re-timed `old`'s candidates (RevalidationCandidates)
  // and nothing else, none with a plan, no stored plan handed on (they are
  // built again), and that `answer`'s record holds them with the old choice
  // first; counted as a revalidation, not a full search.
  void ExpectRetimedFrom(const Record& old, const TuneAnswer& answer) {
    const std::vector<AlgoResult> asked = recording_->retime_only().back();
    ASSERT_FALSE(asked.empty());
    EXPECT_EQ(asked.size(), RevalidationCandidates(old).size());
    for (const AlgoResult& c : asked) EXPECT_TRUE(c.plan.empty());
    EXPECT_TRUE(recording_->stored_plans().back().empty());
    EXPECT_EQ(answer.record->results.size(), asked.size());
    EXPECT_EQ(answer.choice->algo, Choose(old, {})->algo);
    EXPECT_EQ(core_->Stats().revalidated, 1);
    EXPECT_EQ(core_->Stats().revalidation_full_searches, 0);
  }

  std::string db_path_ = ":memory:";  // a test may name a file first
  std::unique_ptr<Store> store_;
  std::unique_ptr<SimulatedFinder> finder_;
  std::unique_ptr<RecordingFinder> recording_;
  std::unique_ptr<TuningCore> core_;
};

TEST_F(TuningCoreTest, TuneSearchesOnceThenServesFromStore) {
  Start("");
  auto first = Tune(TestProblem(8));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->searched);
  ASSERT_TRUE(first->choice.has_value());
  EXPECT_EQ(first->record->finder, "simulated");
  EXPECT_GT(first->record->id, 0);
  auto second = Tune(TestProblem(8));
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->searched);
  EXPECT_EQ(second->choice->algo, first->choice->algo);
  EXPECT_EQ(finder_->searches(), 1);

  auto looked = Lookup(TestProblem(8));
  ASSERT_TRUE(looked.ok()) << looked.status();
  EXPECT_EQ(looked->record->id, first->record->id);
  CoreStats stats = core_->Stats();
  EXPECT_EQ(stats.records, 1);
  EXPECT_EQ(stats.searches, 1);
  EXPECT_EQ(stats.hits, 2);
  EXPECT_EQ(stats.misses, 1);
}

TEST_F(TuningCoreTest, LookupNeverSearches) {
  Start("");
  auto looked = Lookup(TestProblem(8));
  EXPECT_EQ(looked.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(finder_->searches(), 0);
}

TEST_F(TuningCoreTest, SixtyFourIdenticalConcurrentTunesRunOneSearch) {
  Start("slow_ms=200");
  std::vector<std::thread> threads;
  std::atomic<int> ok{0}, searched{0};
  std::vector<int64_t> ids(64);
  for (int i = 0; i < 64; ++i) {
    threads.emplace_back([&, i] {
      auto a = Tune(TestProblem(32));
      if (a.ok()) {
        ++ok;
        if (a->searched) ++searched;
        ids[i] = a->record->id;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 64);
  EXPECT_EQ(finder_->searches(), 1);
  for (int64_t id : ids) EXPECT_EQ(id, ids[0]);
  CoreStats stats = core_->Stats();
  EXPECT_EQ(stats.searches, 1);
  // Every caller either joined the one search or, arriving after it was
  // stored, read the stored record.
  EXPECT_EQ(stats.coalesced + stats.hits + 1, 64);
}

TEST_F(TuningCoreTest, FullQueueAnswersResourceExhausted) {
  TuningCore::Options options;
  options.queue_capacity = 2;
  Start("slow_ms=300", options);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0}, exhausted{0}, other{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      auto a = Tune(TestProblem(100 + i));
      if (a.ok()) {
        ++ok;
      } else if (a.status().code() == absl::StatusCode::kResourceExhausted) {
        ++exhausted;
      } else {
        ++other;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(other.load(), 0);
  EXPECT_GE(exhausted.load(), 1);
  EXPECT_GE(ok.load(), 2);
  EXPECT_EQ(ok.load() + exhausted.load(), 8);
  EXPECT_EQ(core_->Stats().rejected, exhausted.load());
}

TEST_F(TuningCoreTest, DeadlineReturnsButSearchCompletesAndQueueMovesOn) {
  Start("slow_ms=400");
  absl::Time start = absl::Now();
  auto a = Tune(TestProblem(8), absl::Milliseconds(50));
  EXPECT_EQ(a.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(350));
  // The next request for another problem is served: nothing is wedged.
  auto b = Tune(TestProblem(9));
  ASSERT_TRUE(b.ok()) << b.status();
  // The abandoned search finished and was stored.
  EXPECT_TRUE(Lookup(TestProblem(8)).ok());
  EXPECT_EQ(finder_->searches(), 2);
}

TEST_F(TuningCoreTest, CancelledCallerStopsWaiting) {
  Start("slow_ms=400");
  std::atomic<bool> gone{true};
  auto a = core_->Tune(TestProblem(8), std::nullopt, {}, TuneMode{},
                       absl::InfiniteFuture(), [&] { return gone.load(); });
  EXPECT_EQ(a.status().code(), absl::StatusCode::kCancelled);
}

TEST_F(TuningCoreTest, FailedSearchFailsOnlyItsRequest) {
  Start("fail_n=13");
  auto bad = Tune(TestProblem(13));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(bad.status().message().find("fail_n"), absl::string_view::npos);
  auto good = Tune(TestProblem(14));
  EXPECT_TRUE(good.ok()) << good.status();
  EXPECT_EQ(core_->Stats().search_failures, 1);
  // Not stored: the next attempt searches again.
  EXPECT_FALSE(Tune(TestProblem(13)).ok());
  EXPECT_EQ(core_->Stats().search_failures, 2);
}

TEST_F(TuningCoreTest, UnknownDeviceIsFailedPrecondition) {
  Start("");
  DeviceKey other = core_->devices()[0].key;
  other.gpu_model = "Some Other GPU";
  auto a =
      core_->Tune(TestProblem(8), other, {}, TuneMode{},
                  absl::InfiniteFuture());
  EXPECT_EQ(a.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(a.status().message().find("Some%20Other%20GPU"),
            absl::string_view::npos)
      << a.status();
}

TEST_F(TuningCoreTest, InvalidProblemIsInvalidArgument) {
  Start("");
  ConvProblem p = TestProblem(8);
  p.groups = 3;
  EXPECT_EQ(Tune(p).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(TuningCoreTest, ForceSearchesAgain) {
  Start("");
  ASSERT_TRUE(Tune(TestProblem(8)).ok());
  auto again = Tune(TestProblem(8), absl::Seconds(30), /*force=*/true);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->searched);
  EXPECT_EQ(finder_->searches(), 2);
  EXPECT_EQ(core_->Stats().records, 1);
}

TEST_F(TuningCoreTest, ASearchAgainIsGivenThePlansTheLastOneKeptOpened) {
  Start("");
  const ConvProblem graph = GraphProblem(8);
  auto first = Tune(graph);
  ASSERT_TRUE(first.ok()) << first.status();
  // Stored sealed (sealed_plan.h).
  std::vector<AlgoResult> kept;
  for (const AlgoResult& r : first->record->results) {
    if (r.plan.empty()) continue;
    EXPECT_EQ(r.plan.rfind("tunedb-plan/1 ", 0), 0u) << r.plan;
    kept.push_back(r);
    ASSERT_TRUE(UnsealPlan(first->record->key, kept.back()).ok());
  }
  ASSERT_FALSE(kept.empty());
  ASSERT_TRUE(Tune(graph, absl::Seconds(30), /*force=*/true).ok());
  // The legacy key of the same convolution, searched twice, never is.
  ASSERT_TRUE(Tune(TestProblem(8)).ok());
  ASSERT_TRUE(Tune(TestProblem(8), absl::Seconds(30), /*force=*/true).ok());

  const std::vector<std::vector<AlgoResult>> given = recording_->stored_plans();
  ASSERT_EQ(given.size(), 4u);
  EXPECT_TRUE(given[0].empty());  // nothing stored yet
  ASSERT_EQ(given[1].size(), kept.size());
  for (size_t i = 0; i < kept.size(); ++i) {
    EXPECT_EQ(given[1][i].algo, kept[i].algo);
    EXPECT_EQ(given[1][i].knobs, kept[i].knobs);
    EXPECT_EQ(given[1][i].plan, kept[i].plan);  // opened: cuDNN's own text
    EXPECT_NE(given[1][i].plan.find("\"simulated\":true"), std::string::npos);
  }
  EXPECT_TRUE(given[2].empty());
  EXPECT_TRUE(given[3].empty());
}

TEST_F(TuningCoreTest, ASearchAgainSkipsConfigsFarBehindAndKeepsTheirResults) {
  // The simulated model's configs lie within 5x of each other.
  TuningCore::Options options;
  options.far_behind_factor = 1.5;
  Start("", options);
  const ConvProblem graph = GraphProblem(8);
  auto first = Tune(graph);
  ASSERT_TRUE(first.ok()) << first.status();
  const std::vector<AlgoResult> behind =
      FarBehind(*first->record, 1.5, SearchOptions().first_choices);
  ASSERT_FALSE(behind.empty()) << "the model has no config 1.5x behind";
  auto again = Tune(graph, absl::Seconds(30), /*force=*/true);
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_TRUE(again->searched);
  // The legacy key of the same convolution runs every config again.
  ASSERT_TRUE(Tune(TestProblem(8)).ok());
  ASSERT_TRUE(Tune(TestProblem(8), absl::Seconds(30), /*force=*/true).ok());

  const std::vector<std::vector<AlgoResult>> asked = recording_->far_behind();
  const std::vector<size_t> returned = recording_->returned();
  ASSERT_EQ(asked.size(), 4u);
  EXPECT_TRUE(asked[0].empty());  // nothing stored yet
  ASSERT_EQ(asked[1].size(), behind.size());
  for (size_t i = 0; i < behind.size(); ++i) {
    EXPECT_TRUE(SameConfig(asked[1][i], behind[i]));
  }
  EXPECT_EQ(returned[1] + behind.size(), returned[0]);  // not run
  // Carried into the new record as stored, with every config run.
  ASSERT_EQ(again->record->results.size(), first->record->results.size());
  for (const AlgoResult& r : behind) {
    const AlgoResult* kept = nullptr;
    for (const AlgoResult& n : again->record->results) {
      if (SameConfig(n, r)) kept = &n;
    }
    ASSERT_NE(kept, nullptr);
    EXPECT_EQ(kept->launch.median_ms, r.launch.median_ms);
    EXPECT_EQ(kept->status, AlgoStatus::kOk);
  }
  EXPECT_TRUE(asked[2].empty());
  EXPECT_TRUE(asked[3].empty());
  EXPECT_EQ(returned[3], returned[2]);
}

TEST_F(TuningCoreTest, ASearchAgainOfARecordFromAnotherDriverRunsEveryConfig) {
  TuningCore::Options options;
  options.far_behind_factor = 1.5;  // as in the test above
  Start("", options);
  const ConvProblem graph = GraphProblem(8);
  auto first = Tune(graph);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_FALSE(FarBehind(*first->record, 1.5, 3).empty());
  // The record as a host with another driver stored it; a new core reads it
  // from the store.
  Record other_driver = *first->record;
  other_driver.driver_version = "1.0";
  ASSERT_TRUE(store_->Put(other_driver).ok());
  core_->Shutdown(absl::Seconds(5));
  options.flush_interval = absl::Milliseconds(20);
  auto core = TuningCore::Create(options, store_.get(), recording_.get());
  ASSERT_TRUE(core.ok()) << core.status();
  core_ = std::move(*core);
  ASSERT_TRUE(Tune(graph, absl::Seconds(30), /*force=*/true).ok());
  const std::vector<size_t> returned = recording_->returned();
  ASSERT_EQ(returned.size(), 2u);
  EXPECT_EQ(returned[1], returned[0]);
  EXPECT_TRUE(recording_->far_behind()[1].empty());
}

TEST_F(TuningCoreTest, WithTheFactorAtZeroASearchAgainRunsEveryConfig) {
  TuningCore::Options options;
  options.far_behind_factor = 0;
  Start("", options);
  const ConvProblem graph = GraphProblem(8);
  ASSERT_TRUE(Tune(graph).ok());
  ASSERT_TRUE(Tune(graph, absl::Seconds(30), /*force=*/true).ok());
  const std::vector<size_t> returned = recording_->returned();
  ASSERT_EQ(returned.size(), 2u);
  EXPECT_EQ(returned[1], returned[0]);
  EXPECT_TRUE(recording_->far_behind()[1].empty());
}

// Revalidation (revalidation.h): the same graph problem stored under cuDNN
// 9.14, its plans included, revalidated for the device's 9.19.
class RevalidationCoreTest : public TuningCoreTest {
 protected:
  static constexpr int kOld = 91400;
  // Searches `p` on the device and stores the record again as cuDNN kOld's
  // (and deletes the device's own); returns the old record.
  Record StoreAsOld(const ConvProblem& p) {
    auto searched = Tune(p);
    EXPECT_TRUE(searched.ok()) << searched.status();
    Record old = *searched->record;
    old.id = 0;
    old.key.device.cudnn_version = kOld;
    EXPECT_TRUE(store_->Put(old).ok());
    RecordFilter own;
    own.fields["cudnn"] =
        CudnnVersionText(core_->devices()[0].key.cudnn_version);
    EXPECT_EQ(core_->Invalidate(own).value_or(-1), 1);
    return old;
  }
  absl::StatusOr<TuneAnswer> Revalidate(const ConvProblem& p, int from) {
    TuneMode mode;
    mode.revalidate_from_cudnn = from;
    return core_->Tune(p, std::nullopt, {}, mode,
                       absl::Now() + absl::Seconds(30));
  }
};

TEST_F(RevalidationCoreTest, RetimesOnlyTheOldCandidatesBuildsTheirPlansAndSaysSo) {
  Start("");
  const ConvProblem graph = GraphProblem(8);
  const Record old = StoreAsOld(graph);
  auto answer = Revalidate(graph, kOld);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_TRUE(answer->searched);
  EXPECT_EQ(answer->record->revalidated_from_cudnn, kOld);
  ExpectRetimedFrom(old, *answer);
  // The old record is untouched.
  ProblemKey old_key = old.key;
  auto kept = store_->Get(old_key);
  ASSERT_TRUE(kept.ok() && kept->has_value());
  EXPECT_EQ((*kept)->results.size(), old.results.size());
  EXPECT_EQ((*kept)->revalidated_from_cudnn, 0);
}

TEST_F(RevalidationCoreTest,
       ARetimingWhoseRecordCannotBeStoredIsCountedAFailureNotARevalidation) {
  testing_util::TempDir dir;
  db_path_ = dir.File("tunedb.db");
  Start("");
  StoreAsOld(TestProblem(8));
  // From now on the store refuses every record it is given, as a full disk
  // would.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path_.c_str(), &db), SQLITE_OK);
  for (const char* when : {"INSERT", "UPDATE"}) {
    const std::string trigger = absl::StrCat(
        "CREATE TRIGGER refuse_", when, " BEFORE ", when,
        " ON records BEGIN SELECT RAISE(ABORT, 'database or disk is full'); "
        "END");
    ASSERT_EQ(sqlite3_exec(db, trigger.c_str(), nullptr, nullptr, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(db);
  }
  sqlite3_close(db);
  auto answer = Revalidate(TestProblem(8), kOld);
  EXPECT_FALSE(answer.ok());
  EXPECT_FALSE(recording_->retime_only().back().empty());  // it re-timed
  EXPECT_EQ(core_->Stats().revalidated, 0);
  EXPECT_EQ(core_->Stats().search_failures, 1);
}

TEST_F(RevalidationCoreTest, WithNothingStoredUnderTheOldVersionItSearchesInFull) {
  Start("");
  auto answer = Revalidate(TestProblem(8), kOld);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->record->revalidated_from_cudnn, 0);
  EXPECT_TRUE(recording_->retime_only().back().empty());
  EXPECT_GT(answer->record->results.size(), 3u);
  EXPECT_EQ(core_->Stats().revalidation_full_searches, 1);
}

TEST_F(RevalidationCoreTest, OldCandidatesThatNoLongerRunLeadToAFullSearch) {
  Start("");
  Record old = StoreAsOld(TestProblem(8));
  // Algorithms the new version does not have.
  for (AlgoResult& r : old.results) r.algo += 50;
  ASSERT_TRUE(store_->Put(old).ok());
  auto answer = Revalidate(TestProblem(8), kOld);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->record->revalidated_from_cudnn, 0);
  EXPECT_GT(answer->record->results.size(), 3u);
  EXPECT_EQ(core_->Stats().revalidation_full_searches, 1);
  const auto asked = recording_->retime_only();
  ASSERT_GE(asked.size(), 2u);
  EXPECT_FALSE(asked[asked.size() - 2].empty());  // the revalidation
  EXPECT_TRUE(asked.back().empty());              // then the full search
}

TEST_F(RevalidationCoreTest, RevalidatingFromTheDevicesOwnVersionIsInvalid) {
  Start("");
  auto answer =
      Revalidate(TestProblem(8), core_->devices()[0].key.cudnn_version);
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kInvalidArgument);
}

// Revalidation after a driver upgrade (revalidation.h): the device's own
// key stored under an older driver than the device's, re-timed.
class DriverRevalidationCoreTest : public TuningCoreTest {
 protected:
  static constexpr char kServing[] = "580.65.06";
  static constexpr char kOlder[] = "575.57.08";
  void SetUp() override { Start(absl::StrCat("driver=", kServing)); }
  // Searches `p` on the device and stores the record again as measured
  // under `driver` (through the core, so its cache holds it too).
  Record StoreUnderDriver(const ConvProblem& p, const std::string& driver,
                          const std::function<void(Record&)>& edit = {}) {
    auto searched = Tune(p);
    EXPECT_TRUE(searched.ok()) << searched.status();
    Record old = *searched->record;
    EXPECT_EQ(old.driver_version, kServing);
    old.driver_version = driver;
    if (edit) edit(old);
    EXPECT_TRUE(core_->KeepRecord(old).ok());
    return old;
  }
  absl::StatusOr<TuneAnswer> RevalidateDriver(const ConvProblem& p) {
    TuneMode mode;
    mode.revalidate_older_driver = true;
    return core_->Tune(p, std::nullopt, {}, mode,
                       absl::Now() + absl::Seconds(30));
  }
  // The key's record as stored now.
  Record StoredNow(const ConvProblem& p) {
    auto got = store_->Get(ProblemKey{core_->devices()[0].key, p});
    EXPECT_TRUE(got.ok() && got->has_value());
    return got.ok() && got->has_value() ? **got : Record();
  }
};

TEST_F(DriverRevalidationCoreTest,
       ARecordOfAnOlderDriverIsReTimedStoredUnderTheNewOneAndSaysWhichDriver) {
  const ConvProblem graph = GraphProblem(8);
  const Record old = StoreUnderDriver(graph, kOlder);
  ASSERT_TRUE(std::any_of(old.results.begin(), old.results.end(),
                          [](const AlgoResult& r) { return !r.plan.empty(); }));
  auto answer = RevalidateDriver(graph);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_TRUE(answer->searched);
  EXPECT_EQ(answer->record->driver_version, kServing);
  EXPECT_EQ(answer->record->revalidated_from_driver, kOlder);
  EXPECT_EQ(answer->record->revalidated_from_cudnn, 0);
  ExpectRetimedFrom(old, *answer);
  // It replaced the old driver's record of the key (one record per key).
  const Record now = StoredNow(graph);
  EXPECT_EQ(now.id, old.id);
  EXPECT_EQ(now.driver_version, kServing);
  EXPECT_EQ(now.revalidated_from_driver, kOlder);
  EXPECT_EQ(core_->Stats().records, 1);
  // Asked again, it is served as stored.
  auto again = RevalidateDriver(graph);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->searched);
  EXPECT_EQ(finder_->searches(), 2);
}

TEST_F(DriverRevalidationCoreTest,
       ARecordOfTheSameOrANewerDriverIsServedAsStoredWithoutASearch) {
  int64_t n = 1;
  for (const char* driver : {kServing, "580.65.6", "590.12", "581.1.1"}) {
    StoreUnderDriver(TestProblem(n), driver);
    const int64_t searches = finder_->searches();
    auto answer = RevalidateDriver(TestProblem(n));
    ASSERT_TRUE(answer.ok()) << driver << ": " << answer.status();
    EXPECT_FALSE(answer->searched) << driver;
    EXPECT_EQ(answer->record->driver_version, driver);
    EXPECT_EQ(finder_->searches(), searches) << driver;
    ++n;
  }
  EXPECT_EQ(core_->Stats().revalidated, 0);
}

TEST_F(DriverRevalidationCoreTest,
       ARecordWhoseDriverHasNoOrderWithTheDevicesIsServedAsStored) {
  int64_t n = 1;
  for (const char* driver :
       {"simulated", "", "cuda-driver-api-12.8", "575", "575.57.x"}) {
    StoreUnderDriver(TestProblem(n), driver);
    const int64_t searches = finder_->searches();
    auto answer = RevalidateDriver(TestProblem(n));
    ASSERT_TRUE(answer.ok()) << driver << ": " << answer.status();
    EXPECT_FALSE(answer->searched) << driver;
    EXPECT_EQ(finder_->searches(), searches) << driver;
    ++n;
  }
}

TEST_F(DriverRevalidationCoreTest,
       OldCandidatesThatNoLongerRunLeadToAFullSearchGivenNoOldPlans) {
  const ConvProblem graph = GraphProblem(8);
  // Every config the old driver ranked first is one that does not run now
  // (a twin of each, another engine, 10x faster); the real ones, with their
  // plans, rank behind them.
  const Record old = StoreUnderDriver(graph, kOlder, [](Record& r) {
    std::vector<AlgoResult> twins;
    for (const AlgoResult& real : r.results) {
      if (real.status != AlgoStatus::kOk) continue;
      AlgoResult twin = real;
      twin.algo += 50;  // its plan (sealed for the real one) goes with it
      twin.launch.median_ms /= 10;  // ahead of every real config
      twin.gpu.median_ms /= 10;
      twin.host.median_ms /= 10;
      twins.push_back(twin);
    }
    r.results.insert(r.results.end(), twins.begin(), twins.end());
    SortResults(r.results);
  });
  for (const AlgoResult& c : RevalidationCandidates(old)) {
    EXPECT_GE(c.algo, 150) << "a candidate that still runs";
  }

  auto answer = RevalidateDriver(graph);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_TRUE(answer->searched);
  EXPECT_EQ(answer->record->revalidated_from_driver, "");
  EXPECT_EQ(answer->record->driver_version, kServing);
  EXPECT_GT(answer->record->results.size(), 3u);
  EXPECT_EQ(core_->Stats().revalidation_full_searches, 1);
  const auto asked = recording_->retime_only();
  ASSERT_GE(asked.size(), 3u);
  EXPECT_FALSE(asked[asked.size() - 2].empty());  // the revalidation
  EXPECT_TRUE(asked.back().empty());              // then the full search
  EXPECT_TRUE(recording_->stored_plans().back().empty());
  EXPECT_TRUE(recording_->far_behind().back().empty());
}

TEST_F(DriverRevalidationCoreTest, WithNothingStoredItSearchesInFull) {
  auto answer = RevalidateDriver(TestProblem(8));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_TRUE(answer->searched);
  EXPECT_EQ(answer->record->revalidated_from_driver, "");
  EXPECT_TRUE(recording_->retime_only().back().empty());
  EXPECT_EQ(core_->Stats().revalidated, 0);
}

TEST_F(DriverRevalidationCoreTest, ItGoesWithNeitherForceNorAnotherVersion) {
  TuneMode forced;
  forced.revalidate_older_driver = true;
  forced.force = true;
  EXPECT_EQ(core_->Tune(TestProblem(8), std::nullopt, {}, forced,
                        absl::Now() + absl::Seconds(30))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  TuneMode both;
  both.revalidate_older_driver = true;
  both.revalidate_from_cudnn = 91400;
  EXPECT_EQ(core_->Tune(TestProblem(8), std::nullopt, {}, both,
                        absl::Now() + absl::Seconds(30))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(finder_->searches(), 0);
}

TEST_F(TuningCoreTest, StaleRecordIsServedByLookupAndSearchedAgainByTune) {
  Start("");
  // A record as the store holds one measured before launch timing: GPU
  // times only, timing version 1.
  ProblemKey key{core_->devices()[0].key, TestProblem(8)};
  Record old;
  old.key = key;
  old.finder = "simulated";
  old.timing_version = 1;
  old.results = SimulatedFinder::Model(key.problem);
  for (AlgoResult& r : old.results) r.launch = r.host = Timing{};
  ASSERT_TRUE(store_->Put(old).ok());

  auto looked = Lookup(TestProblem(8));
  ASSERT_TRUE(looked.ok()) << looked.status();
  EXPECT_TRUE(looked->record->stale());
  EXPECT_EQ(finder_->searches(), 0);

  auto tuned = Tune(TestProblem(8));
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  EXPECT_TRUE(tuned->searched);
  EXPECT_EQ(finder_->searches(), 1);
  EXPECT_FALSE(tuned->record->stale());
  EXPECT_TRUE(tuned->choice->launch.measured());
  auto again = Tune(TestProblem(8));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->searched);
  EXPECT_EQ(finder_->searches(), 1);
}

TEST_F(TuningCoreTest, LaunchModeChoosesByLaunchOrGpuTime) {
  Start("");
  // Small and 1x1: the simulated host cost of algorithm 1 dominates.
  ConvProblem p = TestProblem(2, 16, 16);
  p.filter = {1, 1, 0};
  p.padding = {0, 0, 0};
  auto direct = Tune(p);
  ASSERT_TRUE(direct.ok()) << direct.status();
  Constraints graph;
  graph.launch_mode = LaunchMode::kGraph;
  auto graphed = Tune(p, absl::Seconds(30), false, graph);
  ASSERT_TRUE(graphed.ok()) << graphed.status();
  EXPECT_EQ(finder_->searches(), 1) << "one search serves both modes";
  for (const AlgoResult& r : direct->record->results) {
    if (r.status != AlgoStatus::kOk) continue;
    EXPECT_LE(direct->choice->launch.median_ms, r.launch.median_ms);
    EXPECT_LE(graphed->choice->gpu.median_ms, r.gpu.median_ms);
  }
  EXPECT_NE(direct->choice->algo, graphed->choice->algo)
      << "the model makes the two costs disagree on this shape";
}

TEST_F(TuningCoreTest, NegativeResultIsStoredAndNotSearchedAgain) {
  Start("");
  ConvProblem huge = TestProblem(1 << 20, 1 << 11, 1 << 10);
  huge.input = {1, 1, 0};
  huge.filter = {1, 1, 0};
  huge.padding = {0, 0, 0};
  auto a = Tune(huge);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_FALSE(a->choice.has_value());
  EXPECT_FALSE(a->record->supported());
  auto b = Tune(huge);
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(b->searched);
  EXPECT_EQ(finder_->searches(), 1);
}

TEST_F(TuningCoreTest, ConstraintsFilterTheStoredRanking) {
  Start("");
  ASSERT_TRUE(Tune(TestProblem(8)).ok());
  Constraints none;
  none.max_workspace_bytes = 0;
  none.deterministic_only = true;
  auto a = Tune(TestProblem(8), absl::Seconds(30), false, none);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(a->choice.has_value());
  EXPECT_EQ(a->choice->workspace_bytes, 0);
  EXPECT_TRUE(a->choice->deterministic);
  auto unconstrained = Tune(TestProblem(8));
  EXPECT_LE(unconstrained->choice->launch.median_ms,
            a->choice->launch.median_ms);
}

TEST_F(TuningCoreTest, DevicesSearchInParallel) {
  Start("devices=2;slow_ms=300");
  std::thread t1([&] { EXPECT_TRUE(Tune(TestProblem(8)).ok()); });
  std::thread t2([&] { EXPECT_TRUE(Tune(TestProblem(9)).ok()); });
  // Both devices are busy at the same moment.
  bool both = false;
  for (int i = 0; i < 200 && !both; ++i) {
    CoreStats s = core_->Stats();
    both = s.queue_depths[0] == 1 && s.queue_depths[1] == 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  t1.join();
  t2.join();
  EXPECT_TRUE(both);
}

TEST_F(TuningCoreTest, APredictionNeedsATunedShapeWithinTheMaximumDistance) {
  Start("");
  ASSERT_TRUE(Tune(TestProblem(8)).ok());
  const auto predict = [&](int64_t n) {
    return core_->Lookup(
        ValidKey::Make(ProblemKey{core_->devices()[0].key, TestProblem(n)})
            .value(),
        Constraints{}, Predictors::kAll);
  };
  // Batch 16 is ln 2 (0.69) from batch 8: near enough.
  absl::StatusOr<LookupAnswer> near = predict(16);
  ASSERT_TRUE(near.ok()) << near.status();
  ASSERT_TRUE(near->prediction.has_value());
  EXPECT_NEAR(near->prediction->distance, std::log(2.0), 1e-9);
  // Batch 32 is ln 4 (1.39) away: beyond the default 1, a miss.
  absl::StatusOr<LookupAnswer> far = predict(32);
  EXPECT_EQ(far.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(far.status().message().find("more than 1 to predict from"),
            std::string::npos)
      << far.status();
}

TEST_F(TuningCoreTest, ServedCountsAreFlushed) {
  Start("");
  auto a = Tune(TestProblem(8));
  ASSERT_TRUE(a.ok());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(Tune(TestProblem(8)).ok());
  core_->Shutdown(absl::Seconds(1));
  ProblemKey key{core_->devices()[0].key, TestProblem(8)};
  auto r = store_->Get(key);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->served_count, 5);
}

TEST_F(TuningCoreTest, ShutdownFailsQueuedSearches) {
  Start("slow_ms=300");
  std::vector<std::thread> threads;
  std::atomic<int> unavailable{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      auto a = Tune(TestProblem(50 + i));
      if (a.status().code() == absl::StatusCode::kUnavailable) ++unavailable;
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  core_->Shutdown(absl::Seconds(2));
  for (auto& t : threads) t.join();
  EXPECT_GE(unavailable.load(), 1);
  EXPECT_EQ(Tune(TestProblem(99)).status().code(),
            absl::StatusCode::kUnavailable);
}

// Searches that programs' misses cause (SearchWhen::kWhenIdle).
constexpr TuneMode kMissMode{false, SearchWhen::kWhenIdle};

class WhenIdleTest : public TuningCoreTest {
 protected:
  void StartWithGpuUse(const std::string& sim,
                       absl::Duration idle_poll = absl::Milliseconds(10),
                       absl::Duration idle_quiet = absl::ZeroDuration()) {
    TuningCore::Options options;
    options.gpu_use = &gpu_use_;
    options.idle_poll = idle_poll;
    options.idle_quiet = idle_quiet;
    Start(sim, options);
  }
  std::future<absl::StatusOr<TuneAnswer>> MissTune(int size) {
    return std::async(std::launch::async, [this, size] {
      return core_->Tune(TestProblem(size), std::nullopt, {}, kMissMode,
                         absl::Now() + absl::Seconds(30));
    });
  }
  static bool Done(std::future<absl::StatusOr<TuneAnswer>>& f,
                   int ms = 150) {
    return f.wait_for(std::chrono::milliseconds(ms)) ==
           std::future_status::ready;
  }
  FakeGpuUse gpu_use_;
};

TEST_F(WhenIdleTest, AMissSearchWaitsWhileItsGpuIsInUseAndRunsOnceIdle) {
  StartWithGpuUse("");
  gpu_use_.Set(0, true);
  auto miss = MissTune(8);
  EXPECT_FALSE(Done(miss, 300));
  EXPECT_EQ(core_->Stats().searches, 0);
  EXPECT_EQ(core_->Stats().waited_for_idle, 1);
  gpu_use_.Set(0, false);
  auto a = miss.get();
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->searched);
  EXPECT_EQ(core_->Stats().searches, 1);
}

TEST_F(WhenIdleTest, AMissSearchWaitsUntilTheGpuHasStayedIdleForTheQuietPeriod) {
  // A program between two bursts of GPU work looks idle for a moment; the
  // search starts only once the GPU has been idle for 1 s without a break.
  StartWithGpuUse("", absl::Milliseconds(10), absl::Seconds(1));
  gpu_use_.Set(0, true);
  auto miss = MissTune(8);
  EXPECT_FALSE(Done(miss, 100));
  gpu_use_.Set(0, false);
  EXPECT_FALSE(Done(miss, 500));
  // The program is back for a moment: the quiet period starts again.
  gpu_use_.Set(0, true);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  gpu_use_.Set(0, false);
  const absl::Time idle_again = absl::Now();
  EXPECT_FALSE(Done(miss, 700));
  EXPECT_EQ(core_->Stats().searches, 0);
  auto a = miss.get();
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->searched);
  EXPECT_GE(absl::Now() - idle_again, absl::Seconds(1));
}

TEST_F(WhenIdleTest, AMissAskingToReturnIfHeldIsAnsweredOnceHeldAndSearchedOnceIdle) {
  StartWithGpuUse("");
  gpu_use_.Set(0, true);
  TuneMode held_mode = kMissMode;
  held_mode.return_if_held = true;
  // Without it the call would wait its whole 60 s for an idle GPU.
  auto first = std::async(std::launch::async, [&] {
    return core_->Tune(TestProblem(8), std::nullopt, {}, held_mode,
                       absl::Now() + absl::Seconds(60));
  });
  ASSERT_EQ(first.wait_for(std::chrono::seconds(20)),
            std::future_status::ready);
  absl::StatusOr<TuneAnswer> a = first.get();
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->held);
  EXPECT_EQ(a->record, nullptr);
  EXPECT_EQ(core_->Stats().searches, 0);
  // Asked again, it joins the held search and is answered the same way.
  a = core_->Tune(TestProblem(8), std::nullopt, {}, held_mode,
                  absl::Now() + absl::Seconds(60));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->held);
  // Once the GPU is idle it is searched and stored, for the next lookup.
  gpu_use_.Set(0, false);
  absl::StatusOr<LookupAnswer> stored = absl::NotFoundError("");
  for (int i = 0; i < 500 && !stored.ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    stored = Lookup(TestProblem(8));
  }
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(core_->Stats().searches, 1);
}

TEST_F(WhenIdleTest, AnotherMissOnAHeldDeviceIsHeldAtOnceWithoutAskingTheGpu) {
  // The worker asks, holds, then asks again only after 10 s.
  StartWithGpuUse("", absl::Seconds(10));
  gpu_use_.Set(0, true);
  TuneMode held_mode = kMissMode;
  held_mode.return_if_held = true;
  absl::StatusOr<TuneAnswer> a = core_->Tune(
      TestProblem(8), std::nullopt, {}, held_mode, absl::Now() + absl::Seconds(5));
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(a->held);
  const int asked = gpu_use_.asked();
  // A program's next miss: neither the worker nor the call asks NVML again.
  a = core_->Tune(TestProblem(9), std::nullopt, {}, held_mode,
                  absl::Now() + absl::Seconds(5));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->held);
  EXPECT_EQ(gpu_use_.asked(), asked);
  EXPECT_EQ(core_->Stats().waited_for_idle, 2);
  core_->Shutdown(absl::Seconds(1));
}

TEST_F(WhenIdleTest, AMissAfterAPauseWaitsAWholeQuietPeriodAgain) {
  // Idle for 1 s: the first miss is searched.
  StartWithGpuUse("", absl::Milliseconds(10), absl::Seconds(1));
  ASSERT_TRUE(MissTune(8).get().ok());
  // Nothing queued for a while: nobody watched the GPU, so an idle moment
  // now (a program between two bursts) does not finish a quiet period.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const absl::Time asked = absl::Now();
  auto next = MissTune(9);
  EXPECT_FALSE(Done(next, 600));
  auto a = next.get();
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_GE(absl::Now() - asked, absl::Seconds(1));
}

TEST_F(WhenIdleTest, AMissQueuedBehindARunningSearchIsHeldAtOnce) {
  StartWithGpuUse("slow_ms=1500");
  auto running = std::async(std::launch::async,
                            [&] { return Tune(TestProblem(7)); });
  // The worker takes it at once; its search takes 1.5 s.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  TuneMode held_mode = kMissMode;
  held_mode.return_if_held = true;
  auto miss = std::async(std::launch::async, [&] {
    return core_->Tune(TestProblem(8), std::nullopt, {}, held_mode,
                       absl::Now() + absl::Seconds(60));
  });
  // Answered long before the running search ends.
  ASSERT_TRUE(Done(miss, 700));
  absl::StatusOr<TuneAnswer> a = miss.get();
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->held);
  EXPECT_EQ(core_->Stats().waited_for_idle, 0);  // behind a search, not idle
  ASSERT_TRUE(running.get().ok());
}

TEST_F(WhenIdleTest, AnExplicitTuneRunsOnABusyGpuAheadOfWaitingMisses) {
  StartWithGpuUse("");
  gpu_use_.Set(0, true);
  auto miss = MissTune(8);
  EXPECT_FALSE(Done(miss));
  auto now = Tune(TestProblem(9));
  ASSERT_TRUE(now.ok()) << now.status();
  EXPECT_TRUE(now->searched);
  EXPECT_FALSE(Done(miss));
  gpu_use_.Set(0, false);
  EXPECT_TRUE(miss.get().ok());
}

TEST_F(WhenIdleTest, AMissThatJoinsAWaitingSearchDoesNotAskTheGpuAgain) {
  // The worker asks once, then not for 10 s.
  StartWithGpuUse("", absl::Seconds(10));
  gpu_use_.Set(0, true);
  auto miss = MissTune(8);
  EXPECT_FALSE(Done(miss, 300));
  const int asked = gpu_use_.asked();
  // A client's retry of the same miss joins the waiting search.
  auto retry = core_->Tune(TestProblem(8), std::nullopt, {}, kMissMode,
                           absl::Now() + absl::Milliseconds(50));
  EXPECT_EQ(retry.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(gpu_use_.asked(), asked);
  EXPECT_EQ(core_->Stats().coalesced, 1);
  core_->Shutdown(absl::Seconds(1));
  EXPECT_EQ(miss.get().status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(WhenIdleTest, AnExplicitTuneOfAWaitingMissRunsItAtOnce) {
  StartWithGpuUse("");
  gpu_use_.Set(0, true);
  auto miss = MissTune(8);
  EXPECT_FALSE(Done(miss));
  auto now = Tune(TestProblem(8));
  ASSERT_TRUE(now.ok()) << now.status();
  EXPECT_TRUE(now->waited_for_search);
  auto a = miss.get();
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->searched);
  EXPECT_EQ(core_->Stats().searches, 1);
}

TEST_F(WhenIdleTest, AMissSearchGoesToAnIdleGpuOfTheSameModel) {
  StartWithGpuUse("devices=2");
  gpu_use_.Set(0, true);
  auto a = MissTune(8).get();
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->searched);
  EXPECT_EQ(core_->Stats().waited_for_idle, 0);
}

TEST_F(WhenIdleTest, WithoutAGpuUseAMissSearchRunsAtOnce) {
  Start("");
  auto a = core_->Tune(TestProblem(8), std::nullopt, {}, kMissMode,
                       absl::Now() + absl::Seconds(30));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->searched);
}

TEST_F(WhenIdleTest, AMissWaitingPastItsDeadlineIsStillSearchedOnceIdle) {
  StartWithGpuUse("");
  gpu_use_.Set(0, true);
  auto late = core_->Tune(TestProblem(8), std::nullopt, {}, kMissMode,
                          absl::Now() + absl::Milliseconds(100));
  EXPECT_EQ(late.status().code(), absl::StatusCode::kDeadlineExceeded);
  gpu_use_.Set(0, false);
  // The next process finds it stored.
  absl::StatusOr<LookupAnswer> stored = absl::NotFoundError("");
  for (int i = 0; i < 200 && !stored.ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    stored = Lookup(TestProblem(8));
  }
  EXPECT_TRUE(stored.ok()) << stored.status();
}

TEST_F(WhenIdleTest, ShutdownFailsMissSearchesStillWaiting) {
  StartWithGpuUse("");
  gpu_use_.Set(0, true);
  auto miss = MissTune(8);
  EXPECT_FALSE(Done(miss));
  core_->Shutdown(absl::Seconds(1));
  EXPECT_EQ(miss.get().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_GT(gpu_use_.asked(), 0);
}

}  // namespace
}  // namespace tunedb
