#include "client/engine_answers.h"

#include <optional>
#include <utility>

#include "client/answer_cache.h"
#include "client/answer_values.h"
#include "common/sealed_plan.h"

namespace tunedb {

EngineAnswers::EngineAnswers(const ClientOptions& options, MissAsker& asker,
                             DatabaseFallback& database, BackgroundJobs& jobs,
                             ClientCounters& counters)
    : options_(options),
      asker_(asker),
      database_(database),
      jobs_(jobs),
      counters_(counters) {}

EngineAnswer EngineAnswers::Get(const ProblemKey& key,
                                const Constraints& constraints) {
  const std::string name = SlotText(key, constraints);
  const int64_t now = CoarseNowMs();
  {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(name);
    if (it != entries_.end() &&
        (it->second.answer.ok() || now < it->second.expires_ms)) {
      counters_.Add(kHits);
      EngineAnswer a = it->second.answer;
      if (a.ok()) a.source = Source::kCache;
      return a;
    }
  }
  counters_.Add(kMisses);
  EngineAnswer a = Miss(key, constraints);
  absl::MutexLock lock(&mu_);
  if (options_.cache_capacity > 0) {
    // Graphs are few (one per layer shape): a full map starts over.
    if (static_cast<int64_t>(entries_.size()) >= options_.cache_capacity) {
      entries_.clear();
    }
    entries_[name] =
        Entry{a, a.ok() ? kNever : DeadlineAfter(now, options_.negative_ttl)};
  }
  return a;
}

void EngineAnswers::Clear() {
  absl::MutexLock lock(&mu_);
  entries_.clear();
}

EngineAnswer EngineAnswers::Miss(const ProblemKey& key,
                                 const Constraints& constraints) {
  const MissOutcome m = asker_.Ask(key, constraints);
  EngineAnswer a;
  switch (m.kind) {
    case MissOutcome::kCacheOnly:
      counters_.Add(kNoneAnswers);
      return a;
    case MissOutcome::kAnswered:
      if (m.reply.choice.has_value()) {
        counters_.Add(kDaemonAnswers);
        a.source = Source::kDaemon;
        a.config = *m.reply.choice;
        // A stored plan reaches the caller only whole and for this key and
        // config (sealed_plan.h); else it builds the config.
        if (!UnsealPlan(key, a.config).ok()) counters_.Add(kPlansRefused);
      } else {
        counters_.Add(kNoneAnswers);
      }
      return a;
    case MissOutcome::kPredicted:
      // Not measured: the key itself is still tuned for the next process.
      counters_.Add(kPredictedAnswers);
      a.source = Source::kPredicted;
      a.config = *m.reply.choice;
      break;
    case MissOutcome::kFailed:
      if (std::optional<DatabaseFallback::Choice> c =
              database_.Find(key, constraints)) {
        counters_.Add(kDatabaseAnswers);
        a.source = Source::kDatabase;
        a.config = std::move(c->choice);
        return a;
      }
      [[fallthrough]];
    case MissOutcome::kNotStored:
      counters_.Add(kNoneAnswers);
      break;
  }
  if (m.tune_later) {
    jobs_.Enqueue(BackgroundJobs::Kind::kTune, key, constraints);
  }
  return a;
}

}  // namespace tunedb
