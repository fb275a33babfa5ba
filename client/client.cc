#include "tunedb/client.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/answer_cache.h"
#include "client/daemon_link.h"
#include "client/packed_key.h"
#include "client/pinned_answers.h"
#include "client/striped_counters.h"
#include "common/enum_names.h"
#include "common/job_id.h"
#include "common/sealed_plan.h"
#include "common/status_macros.h"
#include "proto/tls_credentials.h"
#include "store/store.h"

namespace tunedb {

Client::~Client() = default;

namespace {

constexpr EnumNames<Source, 7> kSourceNames(
    "source", {{{Source::kNone, "none"},
                {Source::kCache, "cache"},
                {Source::kDaemon, "daemon"},
                {Source::kHeuristic, "heuristic"},
                {Source::kDatabase, "database"},
                {Source::kPredicted, "predicted"},
                {Source::kPinned, "pinned"}}});

enum Counter {
  kHits,
  kMisses,
  kDaemonCalls,
  kDaemonAnswers,
  kDaemonErrors,
  kDaemonSkipped,
  kFallbacks,
  kNoneAnswers,
  kBackgroundEnqueued,
  kBackgroundDropped,
  kBackgroundTunes,
  kBackgroundHeld,
  kRefreshes,
  kDatabaseAnswers,
  kPlansRefused,
  kPredictedAnswers,
  kPinnedAnswers,
  kPinMisses,
  kPinRefused,
  kForegroundWaitUs,
  kNumCounters
};

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
// Background jobs retried after a connection failure at most this often.
constexpr int kMaxAttempts = 5;
// How often the worker retries opening ClientOptions::db_path.
constexpr int64_t kDatabaseRetryMs = 5000;

int64_t DeadlineAfter(int64_t now_ms, absl::Duration d) {
  if (d == absl::InfiniteDuration()) return kNever;
  return now_ms + absl::ToInt64Milliseconds(d);
}

// Text naming a job, for de-duplicating background jobs.
std::string JobName(bool refresh, const ProblemKey& key, const Constraints& c) {
  return absl::StrCat(refresh ? "refresh " : "tune ", key.ToText(), " ws=",
                      c.max_workspace_bytes ? *c.max_workspace_bytes : -1,
                      " det=", c.deterministic_only ? 1 : 0,
                      " launch=", LaunchModeName(c.launch_mode),
                      " notes=", c.excluded_numerical_notes);
}

Answer FromValue(const CacheValue& v) {
  Answer a;
  switch (v.kind) {
    case CacheValue::kTuned:
      a.source = Source::kCache;
      break;
    case CacheValue::kHeuristic:
      a.source = Source::kHeuristic;
      break;
    case CacheValue::kPredicted:
      a.source = Source::kPredicted;
      break;
    default:
      return Answer{};
  }
  a.algo = v.algo;
  a.math_type = v.math_type;
  a.workspace_bytes = v.workspace_bytes;
  return a;
}

class ClientImpl final : public Client {
 public:
  ClientImpl(const ClientOptions& options,
             std::shared_ptr<grpc::Channel> channel,
             std::unique_ptr<PinnedAnswers> pin)
      : options_(options),
        link_(options, std::move(channel)),
        pin_(std::move(pin)) {
    if (options.cache_capacity > 0) {
      cache_ = std::make_unique<AnswerCache>(options.cache_capacity);
    }
    worker_ = std::thread([this] { WorkerLoop(); });
  }

  ~ClientImpl() override {
    // Nothing can hear of a failure here: a caller that cares calls
    // WritePin itself first.
    (void)WritePin();
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    link_.Shutdown();
    worker_.join();
  }

  Answer Get(const ProblemKey& key, const Constraints& constraints) override {
    if (pin_ != nullptr) return PinnedGet(key, WithClientLaunchMode(constraints));
    if (options_.launch_mode.has_value() &&
        constraints.launch_mode != *options_.launch_mode) {
      return GetWith(key, WithClientLaunchMode(constraints));
    }
    return GetWith(key, constraints);
  }

  bool Prefetch(const ProblemKey& key,
                const Constraints& constraints) override {
    if (pin_ != nullptr && pin_->following()) return false;
    return Enqueue(Job::kTune, key, WithClientLaunchMode(constraints));
  }

  bool WaitForBackground(absl::Duration timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    return idle_cv_.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                             [&] { return jobs_.empty() && !busy_; });
  }

  absl::Status ReportCounters(const std::string& source,
                              const std::map<std::string, int64_t>& counts,
                              absl::Duration deadline) override {
    if (!link_.Ready()) {
      return absl::UnavailableError("the daemon is backed off from");
    }
    return link_.ReportCounters(source, counts, deadline);
  }

  void ClearCache() override {
    if (cache_ != nullptr) cache_->Clear();
    std::lock_guard<std::mutex> lock(engine_mu_);
    engines_.clear();
    pinned_plans_.clear();
  }

  EngineAnswer GetEngine(const ProblemKey& key,
                         const Constraints& given) override {
    if (key.problem.api != ConvApi::kGraph) return EngineAnswer{};
    const Constraints constraints = WithClientLaunchMode(given);
    if (pin_ != nullptr && pin_->following()) {
      return FollowPin<EngineAnswer>(key, constraints);
    }
    EngineAnswer a = UnpinnedGetEngine(key, constraints);
    if (pin_ == nullptr) return a;
    // Recording (or a job): the slot's first answer stands. While it is
    // the live one, the live one is given, with its stored plan.
    const PinEntry e =
        pin_->Remember(key, constraints, PinnedSourceOf(a.source), a.config);
    if (SameAnswer(e, a)) return a;
    counters_.Add(kPinnedAnswers);
    a = EngineAnswerOf(e);
    WithStoredPlan(key, constraints, a);
    return a;
  }

  absl::Status WritePin() override {
    return pin_ != nullptr ? pin_->Write() : absl::OkStatus();
  }

  absl::Status CheckPin(const DeviceKey& device) const override {
    if (pin_ == nullptr || !pin_->following()) return absl::OkStatus();
    const std::string differences = pin_->Mismatch(device);
    if (differences.empty()) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat("the pin ", options_.pin.path,
                     " was made for another device: ", differences));
  }

  ClientStats Stats() const override {
    ClientStats s;
    s.hits = counters_.Sum(kHits);
    s.misses = counters_.Sum(kMisses);
    s.gets = s.hits + s.misses;
    s.daemon_calls = counters_.Sum(kDaemonCalls);
    s.daemon_answers = counters_.Sum(kDaemonAnswers);
    s.daemon_errors = counters_.Sum(kDaemonErrors);
    s.daemon_skipped = counters_.Sum(kDaemonSkipped);
    s.fallbacks = counters_.Sum(kFallbacks);
    s.none_answers = counters_.Sum(kNoneAnswers);
    s.background_enqueued = counters_.Sum(kBackgroundEnqueued);
    s.background_dropped = counters_.Sum(kBackgroundDropped);
    s.background_tunes = counters_.Sum(kBackgroundTunes);
    s.background_held = counters_.Sum(kBackgroundHeld);
    s.daemon_wait_us = counters_.Sum(kForegroundWaitUs);
    s.refreshes = counters_.Sum(kRefreshes);
    s.plans_refused = counters_.Sum(kPlansRefused);
    s.predicted_answers = counters_.Sum(kPredictedAnswers);
    s.pinned_answers = counters_.Sum(kPinnedAnswers);
    s.pin_misses = counters_.Sum(kPinMisses);
    s.pin_refused = counters_.Sum(kPinRefused);
    s.database_answers = counters_.Sum(kDatabaseAnswers);
    s.database_open = database_.load(std::memory_order_acquire) != nullptr;
    if (cache_ != nullptr) {
      s.evictions = cache_->evictions();
      s.cache_entries = cache_->size();
    }
    return s;
  }

  bool DaemonReachable() const override {
    return link_.failures() == 0 || link_.Ready();
  }

 private:
  // GetEngine without a pin, once the constraints are final.
  EngineAnswer UnpinnedGetEngine(const ProblemKey& key,
                                 const Constraints& constraints) {
    const std::string name = JobName(false, key, constraints);
    const int64_t now = CoarseNowMs();
    {
      std::lock_guard<std::mutex> lock(engine_mu_);
      auto it = engines_.find(name);
      if (it != engines_.end() &&
          (it->second.answer.ok() || now < it->second.expires_ms)) {
        counters_.Add(kHits);
        EngineAnswer a = it->second.answer;
        if (a.ok()) a.source = Source::kCache;
        return a;
      }
    }
    counters_.Add(kMisses);
    EngineAnswer a = EngineMiss(key, constraints);
    std::lock_guard<std::mutex> lock(engine_mu_);
    if (options_.cache_capacity > 0) {
      // Graphs are few (one per layer shape): a full map starts over.
      if (static_cast<int64_t>(engines_.size()) >= options_.cache_capacity) {
        engines_.clear();
      }
      engines_[name] = EngineEntry{
          a, a.ok() ? kNever : DeadlineAfter(now, options_.negative_ttl)};
    }
    return a;
  }

  static PinnedSource PinnedSourceOf(Source s) {
    switch (s) {
      case Source::kNone:
        return PinnedSource::kNone;
      case Source::kHeuristic:
        return PinnedSource::kHeuristic;
      case Source::kPredicted:
        return PinnedSource::kPredicted;
      default:
        return PinnedSource::kTuned;
    }
  }
  static Answer AnswerOf(const PinEntry& e) {
    if (e.source == PinnedSource::kNone) return Answer{};
    return Answer{Source::kPinned, e.answer.algo, e.answer.math_type,
                  e.answer.workspace_bytes};
  }
  static EngineAnswer EngineAnswerOf(const PinEntry& e) {
    if (e.source == PinnedSource::kNone) return EngineAnswer{};
    return EngineAnswer{Source::kPinned, e.answer};
  }
  static AlgoResult ResultOf(const Answer& a) {
    AlgoResult r;
    r.algo = a.algo;
    r.math_type = a.math_type;
    r.workspace_bytes = a.workspace_bytes;
    return r;
  }
  // Whether the pinned entry `e` is the answer `a` (a recording client's
  // slot may have been pinned by another thread first).
  static bool SameAnswer(const PinEntry& e, const Answer& a) {
    if (!a.ok()) return e.source == PinnedSource::kNone;
    return e.source != PinnedSource::kNone && e.answer.algo == a.algo &&
           e.answer.math_type == a.math_type;
  }
  static bool SameAnswer(const PinEntry& e, const EngineAnswer& a) {
    if (!a.ok()) return e.source == PinnedSource::kNone;
    return e.source != PinnedSource::kNone && e.answer.algo == a.config.algo &&
           e.answer.knobs == a.config.knobs;
  }

  // A followed pin's answer (Answer or EngineAnswer): the pinned one, else
  // none, counted as a miss (or a refusal: the pin is another device's).
  // The daemon is never asked.
  template <typename A>
  A FollowPin(const ProblemKey& key, const Constraints& constraints) {
    if (std::optional<PinEntry> e = pin_->Find(key, constraints)) {
      counters_.Add(kPinnedAnswers);
      if constexpr (std::is_same_v<A, Answer>) {
        return AnswerOf(*e);
      } else {
        EngineAnswer a = EngineAnswerOf(*e);
        WithStoredPlan(key, constraints, a);
        return a;
      }
    }
    counters_.Add(options_.pin.accept_mismatch ||
                          pin_->Mismatch(key.device).empty()
                      ? kPinMisses
                      : kPinRefused);
    counters_.Add(kNoneAnswers);
    return A{};
  }

  // A followed pin's engine config `a` with its stored plan, for a caller
  // that loads plans, where a daemon holds the key's record: the pin gives
  // the answer, the daemon only what compiling it would make (the plan is
  // opened for this key and config, sealed_plan.h). The record is asked for
  // once per key; without a daemon, the caller builds the config.
  void WithStoredPlan(const ProblemKey& key, const Constraints& c,
                      EngineAnswer& a) {
    if (!c.loads_stored_plans || !a.ok()) {
      a.config.plan.clear();
      return;
    }
    // The pin's own plan, sealed for this key and config, first.
    if (!a.config.plan.empty()) {
      if (UnsealPlan(key, a.config).ok()) return;
      counters_.Add(kPlansRefused);
    }
    if (options_.lookup_deadline <= absl::ZeroDuration()) return;
    const std::string text = key.ToText();
    std::vector<AlgoResult> with_plans;
    bool known = false;
    {
      std::lock_guard<std::mutex> lock(engine_mu_);
      auto it = pinned_plans_.find(text);
      if (it != pinned_plans_.end()) {
        with_plans = it->second;
        known = true;
      }
    }
    if (!known) {
      if (!link_.Ready()) return;
      counters_.Add(kDaemonCalls);
      absl::StatusOr<Record> record = Waited(
          [&] { return link_.StoredRecord(key, options_.lookup_deadline); });
      if (record.ok()) {
        for (AlgoResult& r : record->results) {
          if (!r.plan.empty()) with_plans.push_back(std::move(r));
        }
      } else if (!absl::IsNotFound(record.status())) {
        counters_.Add(kDaemonErrors);
        return;  // asked again next time
      }
      std::lock_guard<std::mutex> lock(engine_mu_);
      pinned_plans_[text] = with_plans;
    }
    for (const AlgoResult& r : with_plans) {
      if (r.algo != a.config.algo || r.knobs != a.config.knobs) continue;
      a.config.plan = r.plan;
      if (!UnsealPlan(key, a.config).ok()) counters_.Add(kPlansRefused);
      return;
    }
  }

  // Get with a pin: a followed pin's answer, or a recording client's first
  // answer for the slot (the usual path's, then pinned).
  Answer PinnedGet(const ProblemKey& key, const Constraints& constraints) {
    if (pin_->following()) return FollowPin<Answer>(key, constraints);
    if (std::optional<PinEntry> e = pin_->Find(key, constraints)) {
      counters_.Add(kPinnedAnswers);
      return AnswerOf(*e);
    }
    const Answer a = GetWith(key, constraints);
    const PinEntry e = pin_->Remember(key, constraints,
                                      PinnedSourceOf(a.source), ResultOf(a));
    return SameAnswer(e, a) ? a : AnswerOf(e);
  }

  // `constraints` with ClientOptions::launch_mode applied.
  Constraints WithClientLaunchMode(Constraints constraints) const {
    if (options_.launch_mode.has_value()) {
      constraints.launch_mode = *options_.launch_mode;
    }
    return constraints;
  }

  // Get, once the constraints are final: the cache, else the miss path.
  Answer GetWith(const ProblemKey& key, const Constraints& constraints) {
    if (cache_ != nullptr) {
      const int device = devices_.Find(key.device);
      PackedKey packed;
      if (device != 0 && PackKey(device, key.problem, constraints, &packed)) {
        const uint64_t hash = packed.Hash();
        CacheValue value;
        bool refresh = false;
        if (cache_->Lookup(packed, hash, CoarseNowMs(), &value, &refresh)) {
          counters_.Add(kHits);
          if (refresh) Enqueue(Job::kRefresh, key, constraints);
          Answer answer = FromValue(value);
          if (answer.source == Source::kHeuristic) counters_.Add(kFallbacks);
          if (answer.source == Source::kPredicted) {
            counters_.Add(kPredictedAnswers);
          }
          if (answer.source == Source::kNone) counters_.Add(kNoneAnswers);
          return answer;
        }
        return Miss(key, constraints, Slot{true, packed, hash});
      }
    }
    return Miss(key, constraints, MakeSlot(key, constraints));
  }

  // GetEngine's miss path: as Miss, without a heuristic.
  EngineAnswer EngineMiss(const ProblemKey& key,
                          const Constraints& constraints) {
    EngineAnswer a;
    if (options_.miss_policy == MissPolicy::kCacheOnly) {
      counters_.Add(kNoneAnswers);
      return a;
    }
    const bool wait = options_.miss_policy == MissPolicy::kTuneAndWait;
    const absl::Duration deadline =
        wait ? options_.tune_deadline : options_.lookup_deadline;
    bool daemon_failed = false;
    if (!link_.Ready()) {
      counters_.Add(kDaemonSkipped);
      daemon_failed = true;
    } else if (deadline > absl::ZeroDuration()) {
      counters_.Add(kDaemonCalls);
      DaemonLink::Reply reply = Waited([&] {
        return wait ? link_.Tune(key, constraints, deadline)
                    : link_.Lookup(key, constraints, deadline,
                                   LookupPredictions());
      });
      if (reply.status.ok() && reply.predicted && reply.choice.has_value()) {
        // Not measured: the key itself is still tuned for the next process.
        counters_.Add(kPredictedAnswers);
        a.source = Source::kPredicted;
        a.config = *reply.choice;
        if (options_.tune_misses) Enqueue(Job::kTune, key, constraints);
        return a;
      }
      if (reply.status.ok()) {
        if (reply.choice.has_value()) {
          counters_.Add(kDaemonAnswers);
          a.source = Source::kDaemon;
          a.config = *reply.choice;
          // A stored plan reaches the caller only whole and for this
          // key and config (sealed_plan.h); else it builds the config.
          if (!UnsealPlan(key, a.config).ok()) counters_.Add(kPlansRefused);
        } else {
          counters_.Add(kNoneAnswers);
        }
        return a;
      }
      if (reply.status.code() != absl::StatusCode::kNotFound) {
        counters_.Add(kDaemonErrors);
        daemon_failed = true;
      }
    }
    if (daemon_failed) {
      if (std::optional<DatabaseChoice> c = FromDatabase(key, constraints)) {
        counters_.Add(kDatabaseAnswers);
        a.source = Source::kDatabase;
        a.config = std::move(c->choice);
        return a;
      }
    }
    counters_.Add(kNoneAnswers);
    if (wait || options_.tune_misses) Enqueue(Job::kTune, key, constraints);
    return a;
  }

  // Where a miss caches its answer.
  struct Slot {
    bool packable = false;
    PackedKey packed{};
    uint64_t hash = 0;
  };

  struct Job {
    enum Kind { kTune, kRefresh };
    Kind kind;
    ProblemKey key;
    Constraints constraints;
    std::string name;
    int attempts = 0;
  };

  // `call`'s reply, its wall time counted as the caller's wait on the
  // daemon (ClientStats::daemon_wait_us).
  template <typename Call>
  std::invoke_result_t<Call> Waited(Call call) {
    const absl::Time start = absl::Now();
    std::invoke_result_t<Call> reply = call();
    counters_.Add(kForegroundWaitUs,
                  absl::ToInt64Microseconds(absl::Now() - start));
    return reply;
  }

  // The answer for a miss, by policy; `slot` says where to cache it.
  Answer Miss(const ProblemKey& key, const Constraints& constraints,
              const Slot& slot) {
    counters_.Add(kMisses);

    switch (options_.miss_policy) {
      case MissPolicy::kCacheOnly:
        counters_.Add(kNoneAnswers);
        return Answer{};
      case MissPolicy::kTuneAndWait: {
        if (!link_.Ready()) {
          counters_.Add(kDaemonSkipped);
          const Answer a = DatabaseOrFallback(key, constraints, slot);
          Enqueue(Job::kTune, key, constraints);
          return a;
        }
        counters_.Add(kDaemonCalls);
        DaemonLink::Reply reply = Waited(
            [&] { return link_.Tune(key, constraints, options_.tune_deadline); });
        if (reply.status.ok()) {
          return FromDaemon(reply, key, constraints, slot);
        }
        counters_.Add(kDaemonErrors);
        // Slow search or unreachable daemon: keep waiting in the background.
        const Answer a = DatabaseOrFallback(key, constraints, slot);
        Enqueue(Job::kTune, key, constraints);
        return a;
      }
      case MissPolicy::kBackground:
        break;
    }
    // kBackground.
    bool daemon_failed = false;
    if (!link_.Ready()) {
      counters_.Add(kDaemonSkipped);
      daemon_failed = true;
    } else if (options_.lookup_deadline > absl::ZeroDuration()) {
      counters_.Add(kDaemonCalls);
      DaemonLink::Reply reply = Waited([&] {
        return link_.Lookup(key, constraints, options_.lookup_deadline,
                            LookupPredictions());
      });
      if (reply.status.ok() && reply.predicted && reply.choice.has_value()) {
        const Answer a = Predicted(*reply.choice, slot);
        if (options_.tune_misses) Enqueue(Job::kTune, key, constraints);
        return a;
      }
      if (reply.status.ok()) {
        return FromDaemon(reply, key, constraints, slot);
      }
      if (reply.status.code() != absl::StatusCode::kNotFound) {
        counters_.Add(kDaemonErrors);
        daemon_failed = true;
      }
    }
    // The provisional answer is cached before the job is queued, and never
    // replaces a tuned one, so a fast background answer is not lost.
    const Answer a = daemon_failed ? DatabaseOrFallback(key, constraints, slot)
                                   : Fallback(key, constraints, slot);
    if (options_.tune_misses) Enqueue(Job::kTune, key, constraints);
    return a;
  }

  struct DatabaseChoice {
    AlgoResult choice;
    int64_t measured_at_us = 0;
  };

  // The choice under `constraints` of the record for `key` in the database
  // file (ClientOptions::db_path), if it is open and has one that fits.
  std::optional<DatabaseChoice> FromDatabase(const ProblemKey& key,
                                             const Constraints& constraints) {
    Store* db = database_.load(std::memory_order_acquire);
    if (db == nullptr) return std::nullopt;
    absl::StatusOr<std::optional<Record>> record = db->Get(key);
    if (!record.ok() || !record->has_value()) return std::nullopt;
    std::optional<AlgoResult> choice = Choose(**record, constraints);
    if (!choice.has_value()) return std::nullopt;
    return DatabaseChoice{*std::move(choice), (*record)->measured_at_us};
  }

  // For a daemon that could not answer: the database file's choice
  // (FromDatabase), else Fallback.
  Answer DatabaseOrFallback(const ProblemKey& key,
                            const Constraints& constraints, const Slot& slot) {
    std::optional<DatabaseChoice> c = FromDatabase(key, constraints);
    if (!c.has_value()) return Fallback(key, constraints, slot);
    CacheTuned(slot, c->choice, c->measured_at_us);
    counters_.Add(kDatabaseAnswers);
    return Answer{Source::kDatabase, c->choice.algo, c->choice.math_type,
                  c->choice.workspace_bytes};
  }

  // The slot of a key on the slow path: interns its device first.
  Slot MakeSlot(const ProblemKey& key, const Constraints& constraints) {
    Slot slot;
    if (cache_ == nullptr) return slot;
    const int device = devices_.Intern(key.device);
    if (device != 0 &&
        PackKey(device, key.problem, constraints, &slot.packed)) {
      slot.packable = true;
      slot.hash = slot.packed.Hash();
    }
    return slot;
  }

  Answer FromDaemon(const DaemonLink::Reply& reply, const ProblemKey& key,
                    const Constraints& constraints, const Slot& slot) {
    if (!reply.choice.has_value()) {
      // The record exists but nothing meets the constraints (or nothing
      // supports the problem): a negative answer.
      return Fallback(key, constraints, slot);
    }
    CacheTuned(slot, *reply.choice, reply.measured_at_us);
    counters_.Add(kDaemonAnswers);
    Answer a;
    a.source = Source::kDaemon;
    a.algo = reply.choice->algo;
    a.math_type = reply.choice->math_type;
    a.workspace_bytes = reply.choice->workspace_bytes;
    return a;
  }

  void CacheTuned(const Slot& slot, const AlgoResult& choice,
                  int64_t measured_at_us) {
    if (cache_ == nullptr || !slot.packable) return;
    CacheValue v;
    v.kind = CacheValue::kTuned;
    v.algo = choice.algo;
    v.math_type = choice.math_type;
    v.workspace_bytes = choice.workspace_bytes;
    v.deadline_ms =
        options_.refresh_interval > absl::ZeroDuration()
            ? DeadlineAfter(CoarseNowMs(), options_.refresh_interval)
            : kNever;
    cache_->Insert(slot.packed, slot.hash, v, measured_at_us);
  }

  // The predictions a Lookup miss may be answered with.
  DaemonLink::Predict LookupPredictions() const {
    if (options_.predict_misses) return DaemonLink::Predict::kAll;
    return options_.predict_from_other_versions
               ? DaemonLink::Predict::kOtherVersions
               : DaemonLink::Predict::kNone;
  }

  // A prediction for a key never tuned (ClientOptions::predict_misses,
  // predict_from_other_versions),
  // cached for negative_ttl as a provisional answer: the key's own search,
  // once stored, is what the next lookup after that finds.
  Answer Predicted(const AlgoResult& choice, const Slot& slot) {
    counters_.Add(kPredictedAnswers);
    if (cache_ != nullptr && slot.packable) {
      CacheValue v;
      v.kind = CacheValue::kPredicted;
      v.algo = choice.algo;
      v.math_type = choice.math_type;
      v.workspace_bytes = choice.workspace_bytes;
      v.deadline_ms = DeadlineAfter(CoarseNowMs(), options_.negative_ttl);
      cache_->Insert(slot.packed, slot.hash, v, 0, /*keep_tuned=*/true);
    }
    return Answer{Source::kPredicted, choice.algo, choice.math_type,
                  choice.workspace_bytes};
  }

  // The heuristic's answer (or none), cached for negative_ttl.
  Answer Fallback(const ProblemKey& key, const Constraints& constraints,
                  const Slot& slot) {
    std::optional<AlgoResult> guess;
    if (options_.heuristic) guess = options_.heuristic(key, constraints);
    CacheValue v;
    Answer a;
    if (guess.has_value()) {
      v.kind = CacheValue::kHeuristic;
      v.algo = guess->algo;
      v.math_type = guess->math_type;
      v.workspace_bytes = guess->workspace_bytes;
      a = Answer{Source::kHeuristic, guess->algo, guess->math_type,
                 guess->workspace_bytes};
      counters_.Add(kFallbacks);
    } else {
      v.kind = CacheValue::kNone;
      counters_.Add(kNoneAnswers);
    }
    if (cache_ != nullptr && slot.packable) {
      v.deadline_ms = DeadlineAfter(CoarseNowMs(), options_.negative_ttl);
      cache_->Insert(slot.packed, slot.hash, v, 0, /*keep_tuned=*/true);
    }
    return a;
  }

  // Queues a background job unless the same one is queued; false if not
  // queued.
  bool Enqueue(Job::Kind kind, const ProblemKey& key,
               const Constraints& constraints) {
    std::string name = JobName(kind == Job::kRefresh, key, constraints);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_ || queued_.count(name) != 0) return false;
      if (static_cast<int>(jobs_.size()) >=
          options_.background_queue_capacity) {
        counters_.Add(kBackgroundDropped);
        return false;
      }
      queued_.insert(name);
      jobs_.push_back(Job{kind, key, constraints, std::move(name), 0});
    }
    counters_.Add(kBackgroundEnqueued);
    cv_.notify_one();
    return true;
  }

  // Opens ClientOptions::db_path read-only if it is set and not open yet,
  // at most every kDatabaseRetryMs. Called by the worker without mu_.
  void MaybeOpenDatabase() {
    if (options_.db_path.empty() || store_ != nullptr) return;
    const int64_t now = CoarseNowMs();
    if (now < database_retry_ms_) return;
    database_retry_ms_ = now + kDatabaseRetryMs;
    Store::Options o;
    o.path = options_.db_path;
    o.read_only = true;
    o.read_connections = 2;
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(o);
    if (!store.ok()) return;
    store_ = *std::move(store);
    database_.store(store_.get(), std::memory_order_release);
  }

  void WorkerLoop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      if (!options_.db_path.empty() && store_ == nullptr) {
        lock.unlock();
        MaybeOpenDatabase();
        lock.lock();
      }
      cv_.wait_for(lock, std::chrono::milliseconds(kDatabaseRetryMs),
                   [&] { return stopping_ || !jobs_.empty(); });
      if (stopping_) break;
      if (jobs_.empty()) continue;
      // Respect the backoff: wait for it to end (or for shutdown).
      const int64_t wait_ms = link_.retry_at_ms() - CoarseNowMs();
      if (wait_ms > 0) {
        cv_.wait_for(lock, std::chrono::milliseconds(wait_ms),
                     [&] { return stopping_; });
        continue;
      }
      Job job = std::move(jobs_.front());
      jobs_.pop_front();
      if (job.kind == Job::kTune && HeldRecently(job.key)) {
        // The daemon holds this key's search already (for another caller
        // constraint): asking again would only be held again.
        queued_.erase(job.name);
        if (jobs_.empty()) idle_cv_.notify_all();
        continue;
      }
      busy_ = true;
      lock.unlock();
      const Retry retry = Run(job);
      lock.lock();
      busy_ = false;
      if (!stopping_ &&
          (retry == Retry::kFree ||
           (retry == Retry::kCounted && ++job.attempts < kMaxAttempts))) {
        jobs_.push_back(std::move(job));
      } else {
        queued_.erase(job.name);
      }
      if (jobs_.empty()) idle_cv_.notify_all();
    }
    jobs_.clear();
    queued_.clear();
    busy_ = false;
    idle_cv_.notify_all();
  }

  // Whether a job is sent again: no, yes within kMaxAttempts (the daemon
  // was unreachable or full), or yes without counting an attempt.
  enum class Retry { kNo, kCounted, kFree };

  // Runs one job and says whether to send it again.
  Retry Run(const Job& job) {
    const Slot slot = MakeSlot(job.key, job.constraints);
    counters_.Add(kDaemonCalls);
    if (job.kind == Job::kRefresh) {
      DaemonLink::Reply reply =
          link_.Lookup(job.key, job.constraints,
                       options_.lookup_deadline + absl::Seconds(1));
      if (reply.status.ok() && reply.choice.has_value()) {
        std::optional<int64_t> before =
            slot.packable ? cache_->MeasuredAt(slot.packed, slot.hash)
                          : std::nullopt;
        if (before.has_value() && *before != reply.measured_at_us) {
          counters_.Add(kRefreshes);
        }
        CacheTuned(slot, *reply.choice, reply.measured_at_us);
        return Retry::kNo;
      }
      if (!reply.status.ok() &&
          reply.status.code() != absl::StatusCode::kNotFound) {
        counters_.Add(kDaemonErrors);
      }
      // Gone or unusable now: keep serving the cached answer until the next
      // re-check, and ask for a new search if the record is gone.
      RearmRefresh(slot);
      if (reply.status.code() == absl::StatusCode::kNotFound) {
        Enqueue(Job::kTune, job.key, job.constraints);
      }
      return Retry::kNo;
    }
    // A miss of this program: searched while no program uses the GPU.
    DaemonLink::Reply reply =
        link_.Tune(job.key, job.constraints, options_.background_tune_deadline,
                   /*when_idle=*/true);
    if (reply.status.ok()) {
      if (reply.held) {
        // Searched once the GPU is idle and stored: a lookup after the
        // cached answer's TTL (or the next process) finds it. Asked again
        // now, under any constraints, it would only be held again.
        counters_.Add(kBackgroundHeld);
        std::lock_guard<std::mutex> lock(mu_);
        held_[job.key.ToText()] =
            DeadlineAfter(CoarseNowMs(), options_.refresh_interval);
        return Retry::kNo;
      }
      if (reply.choice.has_value()) {
        counters_.Add(kBackgroundTunes);
        CacheTuned(slot, *reply.choice, reply.measured_at_us);
      }
      // No choice: the negative entry already cached stays until its TTL.
      return Retry::kNo;
    }
    const absl::StatusCode code = reply.status.code();
    // Past its deadline the search still runs in the daemon (queued, or
    // waiting for the GPU to be idle): asked again later, the call joins
    // it; that is no failure, and is not counted against the attempts.
    if (code == absl::StatusCode::kDeadlineExceeded) return Retry::kFree;
    counters_.Add(kDaemonErrors);
    return code == absl::StatusCode::kUnavailable ||
                   code == absl::StatusCode::kResourceExhausted
               ? Retry::kCounted
               : Retry::kNo;
  }

  // Rewrites a tuned entry with a fresh re-check deadline.
  void RearmRefresh(const Slot& slot) {
    if (cache_ == nullptr || !slot.packable) return;
    // Re-read the entry through the normal path and write it back.
    CacheValue v;
    bool unused = false;
    if (!cache_->Lookup(slot.packed, slot.hash, CoarseNowMs(), &v, &unused) ||
        v.kind != CacheValue::kTuned) {
      return;
    }
    std::optional<int64_t> measured =
        cache_->MeasuredAt(slot.packed, slot.hash);
    v.deadline_ms = DeadlineAfter(CoarseNowMs(), options_.refresh_interval);
    cache_->Insert(slot.packed, slot.hash, v, measured.value_or(0));
  }

  const ClientOptions options_;
  DaemonLink link_;
  const std::unique_ptr<PinnedAnswers> pin_;  // null without a pin
  struct EngineEntry {
    EngineAnswer answer;
    int64_t expires_ms = 0;  // for answers that are not ok()
  };
  mutable std::mutex engine_mu_;
  std::map<std::string, EngineEntry> engines_;  // by JobName(false, ...)
  // Key texts whose search the daemon held for an idle GPU, and until when
  // (CoarseNowMs) they are not asked for again: a held search may still be
  // lost (a daemon restarted before it ran). Guarded by mu_.
  std::map<std::string, int64_t> held_;

  // Whether `key`'s search was held within refresh_interval (forgets it
  // after). Called with mu_ held.
  bool HeldRecently(const ProblemKey& key) {
    auto it = held_.find(key.ToText());
    if (it == held_.end()) return false;
    if (CoarseNowMs() < it->second) return true;
    held_.erase(it);
    return false;
  }
  // A followed pin's keys: their records' results that kept a plan
  // (WithStoredPlan), by key text; guarded by engine_mu_.
  std::map<std::string, std::vector<AlgoResult>> pinned_plans_;
  std::unique_ptr<AnswerCache> cache_;
  DeviceTable devices_;
  // ClientOptions::db_path, opened by the worker; database_ is what readers
  // load. store_ and database_retry_ms_ belong to the worker thread.
  std::unique_ptr<Store> store_;
  std::atomic<Store*> database_{nullptr};
  int64_t database_retry_ms_ = 0;
  StripedCounters<kNumCounters> counters_;

  std::mutex mu_;
  std::condition_variable cv_;       // jobs queued or stopping
  std::condition_variable idle_cv_;  // queue drained
  std::deque<Job> jobs_;
  std::set<std::string> queued_;  // names of queued or running jobs
  bool busy_ = false;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace

std::string_view SourceName(Source s) {
  const absl::string_view name = kSourceNames.Name(s);
  return std::string_view(name.data(), name.size());
}

absl::StatusOr<std::unique_ptr<Client>> Client::Create(
    const ClientOptions& options) {
  if (options.address.empty()) {
    return absl::InvalidArgumentError("ClientOptions.address is empty");
  }
  if (options.cache_capacity < 0) {
    return absl::InvalidArgumentError("ClientOptions.cache_capacity < 0");
  }
  if (options.lookup_deadline < absl::ZeroDuration() ||
      options.tune_deadline <= absl::ZeroDuration() ||
      options.background_tune_deadline <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "ClientOptions deadlines must be positive (lookup_deadline may be 0)");
  }
  if (options.negative_ttl < absl::ZeroDuration() ||
      options.refresh_interval < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "ClientOptions.negative_ttl and refresh_interval must be >= 0");
  }
  if (options.reconnect_backoff_min <= absl::ZeroDuration() ||
      options.reconnect_backoff_max < options.reconnect_backoff_min) {
    return absl::InvalidArgumentError(
        "ClientOptions needs 0 < reconnect_backoff_min <= "
        "reconnect_backoff_max");
  }
  if (options.background_queue_capacity < 1) {
    return absl::InvalidArgumentError(
        "ClientOptions.background_queue_capacity must be >= 1");
  }
  RETURN_IF_ERROR(ValidateJobId(options.job_id));
  std::unique_ptr<PinnedAnswers> pin;
  if (options.pin.mode != PinMode::kOff || !options.pin.path.empty()) {
    ASSIGN_OR_RETURN(pin, PinnedAnswers::Open(options.pin));
  } else if (!options.job_id.empty()) {
    pin = PinnedAnswers::InMemory();
  }
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> channel,
                   CreateDaemonChannel(options.address, options.tls,
                                       DaemonLink::ChannelArgs(options)));
  return std::unique_ptr<Client>(
      new ClientImpl(options, std::move(channel), std::move(pin)));
}

}  // namespace tunedb
