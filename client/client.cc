// Client::Create and ClientImpl, the Client API over the client's parts:
// CachedAnswers (the in-process cache), MissAsker (the miss policy),
// DatabaseFallback, BackgroundJobs, EngineAnswers (GetEngine's answers) and
// PinnedGets (a pin's answers).
#include "tunedb/client.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/answer_cache.h"
#include "client/answer_values.h"
#include "client/background_jobs.h"
#include "client/cached_answers.h"
#include "client/client_counters.h"
#include "client/daemon_link.h"
#include "client/database_fallback.h"
#include "client/engine_answers.h"
#include "client/miss_asker.h"
#include "client/pinned_answers.h"
#include "client/pinned_gets.h"
#include "client/validate_client_options.h"
#include "common/enum_names.h"
#include "common/status_macros.h"
#include "proto/tls_credentials.h"

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

class ClientImpl final : public Client {
 public:
  ClientImpl(const ClientOptions& options,
             std::shared_ptr<grpc::Channel> channel,
             std::unique_ptr<PinnedAnswers> pin)
      : options_(options),
        link_(options_, std::move(channel)),
        cached_(options_),
        database_(options_.db_path),
        asker_(options_, link_, counters_),
        jobs_(options_, link_, cached_, database_, counters_),
        engines_(options_, asker_, database_, jobs_, counters_) {
    if (pin != nullptr) {
      pinned_ = std::make_unique<PinnedGets>(std::move(pin), options_, link_,
                                             counters_);
    }
  }

  ~ClientImpl() override {
    // Nothing can hear of a failure here: a caller that cares calls
    // WritePin itself first.
    (void)WritePin();
    jobs_.Stop();
  }

  Answer Get(const ProblemKey& key, const Constraints& constraints) override {
    if (pinned_ != nullptr) {
      const Constraints c = WithClientLaunchMode(constraints);
      return pinned_->Get(key, c, [&] { return GetWith(key, c); });
    }
    if (options_.launch_mode.has_value() &&
        constraints.launch_mode != *options_.launch_mode) {
      return GetWith(key, WithClientLaunchMode(constraints));
    }
    return GetWith(key, constraints);
  }

  bool Prefetch(const ProblemKey& key,
                const Constraints& constraints) override {
    if (pinned_ != nullptr && pinned_->answers().following()) return false;
    return jobs_.Enqueue(BackgroundJobs::Kind::kTune, key,
                         WithClientLaunchMode(constraints));
  }

  bool WaitForBackground(absl::Duration timeout) override {
    return jobs_.WaitIdle(timeout);
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
    cached_.Clear();
    engines_.Clear();
    if (pinned_ != nullptr) pinned_->ClearPlans();
  }

  EngineAnswer GetEngine(const ProblemKey& key,
                         const Constraints& given) override {
    if (key.problem.api != ConvApi::kGraph) return EngineAnswer{};
    const Constraints c = WithClientLaunchMode(given);
    if (pinned_ == nullptr) return engines_.Get(key, c);
    return pinned_->GetEngine(key, c, [&] { return engines_.Get(key, c); });
  }

  absl::Status WritePin() override {
    return pinned_ != nullptr ? pinned_->answers().Write() : absl::OkStatus();
  }

  absl::Status CheckPin(const DeviceKey& device) const override {
    if (pinned_ == nullptr || !pinned_->answers().following()) {
      return absl::OkStatus();
    }
    const std::string differences = pinned_->answers().Mismatch(device);
    if (differences.empty()) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat("the pin ", options_.pin.path,
                     " was made for another device: ", differences));
  }

  ClientStats Stats() const override {
    ClientStats s = CountedStats(counters_);
    s.database_open = database_.open();
    s.evictions = cached_.evictions();
    s.cache_entries = cached_.size();
    s.pin_unsealed = pinned_ != nullptr && pinned_->answers().unsealed();
    return s;
  }

  bool DaemonReachable() const override {
    return link_.failures() == 0 || link_.Ready();
  }

 private:
  // `constraints` with ClientOptions::launch_mode applied.
  Constraints WithClientLaunchMode(Constraints constraints) const {
    if (options_.launch_mode.has_value()) {
      constraints.launch_mode = *options_.launch_mode;
    }
    return constraints;
  }

  // Get, once the constraints are final: the cache, else the miss path.
  Answer GetWith(const ProblemKey& key, const Constraints& constraints) {
    CacheSlot slot;
    CacheValue value;
    bool refresh = false;
    if (cached_.Lookup(key, constraints, &slot, &value, &refresh)) {
      counters_.Add(kHits);
      if (refresh) {
        jobs_.Enqueue(BackgroundJobs::Kind::kRefresh, key, constraints);
      }
      const Answer answer = AnswerFromCached(value);
      if (answer.source == Source::kHeuristic) counters_.Add(kFallbacks);
      if (answer.source == Source::kPredicted) {
        counters_.Add(kPredictedAnswers);
      }
      if (answer.source == Source::kNone) counters_.Add(kNoneAnswers);
      return answer;
    }
    if (slot.packable) return Miss(key, constraints, slot);
    return Miss(key, constraints, cached_.MakeSlot(key, constraints));
  }

  // The answer for a miss: what MissAsker got, else the database file's
  // or the heuristic's; `slot` says where to cache it.
  Answer Miss(const ProblemKey& key, const Constraints& constraints,
              const CacheSlot& slot) {
    counters_.Add(kMisses);
    const MissOutcome m = asker_.Ask(key, constraints);
    Answer a;
    switch (m.kind) {
      case MissOutcome::kCacheOnly:
        counters_.Add(kNoneAnswers);
        return a;
      case MissOutcome::kAnswered:
        return FromDaemon(m.reply, key, constraints, slot);
      case MissOutcome::kPredicted:
        // Cached for negative_ttl as a provisional answer: the key's own
        // search, once stored, is what the next lookup after that finds.
        counters_.Add(kPredictedAnswers);
        cached_.PutProvisional(slot, CacheValue::kPredicted, *m.reply.choice);
        a = AnswerFrom(Source::kPredicted, *m.reply.choice);
        break;
      case MissOutcome::kNotStored:
        a = Fallback(key, constraints, slot);
        break;
      case MissOutcome::kFailed:
        a = DatabaseOrFallback(key, constraints, slot);
        break;
    }
    // The provisional answer is cached before the job is queued, and never
    // replaces a tuned one, so a fast background answer is not lost.
    if (m.tune_later) {
      jobs_.Enqueue(BackgroundJobs::Kind::kTune, key, constraints);
    }
    return a;
  }

  // The daemon's answer: its choice, cached, else Fallback (the record
  // exists but nothing meets the constraints, or supports the problem).
  Answer FromDaemon(const DaemonLink::Reply& reply, const ProblemKey& key,
                    const Constraints& constraints, const CacheSlot& slot) {
    if (!reply.choice.has_value()) return Fallback(key, constraints, slot);
    cached_.PutTuned(slot, *reply.choice, reply.measured_at_us);
    counters_.Add(kDaemonAnswers);
    return AnswerFrom(Source::kDaemon, *reply.choice);
  }

  // For a daemon that could not answer: the database file's choice, else
  // Fallback.
  Answer DatabaseOrFallback(const ProblemKey& key,
                            const Constraints& constraints,
                            const CacheSlot& slot) {
    std::optional<DatabaseFallback::Choice> c =
        database_.Find(key, constraints);
    if (!c.has_value()) return Fallback(key, constraints, slot);
    cached_.PutTuned(slot, c->choice, c->measured_at_us);
    counters_.Add(kDatabaseAnswers);
    return AnswerFrom(Source::kDatabase, c->choice);
  }

  // The heuristic's answer (or none), cached for negative_ttl.
  Answer Fallback(const ProblemKey& key, const Constraints& constraints,
                  const CacheSlot& slot) {
    std::optional<AlgoResult> guess;
    if (options_.heuristic) guess = options_.heuristic(key, constraints);
    if (!guess.has_value()) {
      counters_.Add(kNoneAnswers);
      cached_.PutProvisional(slot, CacheValue::kNone, AlgoResult{});
      return Answer{};
    }
    counters_.Add(kFallbacks);
    cached_.PutProvisional(slot, CacheValue::kHeuristic, *guess);
    return AnswerFrom(Source::kHeuristic, *guess);
  }

  const ClientOptions options_;
  ClientCounters counters_;
  DaemonLink link_;
  CachedAnswers cached_;
  DatabaseFallback database_;
  MissAsker asker_;
  BackgroundJobs jobs_;  // its thread starts once the parts above exist
  EngineAnswers engines_;
  std::unique_ptr<PinnedGets> pinned_;  // null without a pin
};

}  // namespace

std::string_view SourceName(Source s) {
  const absl::string_view name = kSourceNames.Name(s);
  return std::string_view(name.data(), name.size());
}

absl::StatusOr<std::unique_ptr<Client>> Client::Create(
    const ClientOptions& options) {
  RETURN_IF_ERROR(ValidateClientOptions(options));
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
