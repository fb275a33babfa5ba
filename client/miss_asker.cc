#include "client/miss_asker.h"

#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace tunedb {
namespace {

// The Warm's own deadline: its answers are of use after the misses stopped
// waiting for it (a key that misses later takes its answer at once).
constexpr absl::Duration kWarmDeadline = absl::Seconds(10);

// `out`'s kind for an OK reply: a prediction, else the daemon's answer.
MissOutcome::Kind AnsweredKind(const DaemonLink::Reply& reply) {
  return reply.predicted && reply.choice.has_value() ? MissOutcome::kPredicted
                                                     : MissOutcome::kAnswered;
}

}  // namespace

MissAsker::MissAsker(const ClientOptions& options, DaemonLink& link,
                     ClientCounters& counters)
    : options_(options), link_(link), counters_(counters) {
  if (!options_.program.empty() && options_.warm_at_start &&
      options_.miss_policy == MissPolicy::kBackground) {
    warm_ = std::make_unique<WarmAnswers>(options_.lookup_deadline, counters_);
  }
}

DaemonLink::Predict MissAsker::LookupPredictions() const {
  if (options_.predict_misses) return DaemonLink::Predict::kAll;
  return options_.predict_from_other_versions
             ? DaemonLink::Predict::kOtherVersions
             : DaemonLink::Predict::kNone;
}

bool MissAsker::FromWarm(const ProblemKey& key, const Constraints& constraints,
                         MissOutcome* out) {
  const bool ready = link_.Ready();
  if (ready) {
    // Only the first Start calls: the device is the first miss's.
    warm_->Start([&link = link_, device = key.device,
                  predict = LookupPredictions()] {
      return link.Warm(device, predict, kWarmDeadline);
    });
  }
  const absl::Time start = absl::Now();
  std::optional<DaemonLink::Reply> reply =
      warm_->Take(key, constraints, /*may_wait=*/ready);
  const int64_t waited_us = absl::ToInt64Microseconds(absl::Now() - start);
  counters_.Add(kWarmWaitUs, waited_us);
  counters_.Add(kForegroundWaitUs, waited_us);
  if (!reply.has_value()) return false;
  counters_.Add(kWarmAnswers);
  out->reply = *std::move(reply);
  out->kind = out->reply.status.ok() ? AnsweredKind(out->reply)
                                     : MissOutcome::kNotStored;
  return true;
}

MissOutcome MissAsker::Ask(const ProblemKey& key,
                           const Constraints& constraints) {
  MissOutcome out;
  if (options_.miss_policy == MissPolicy::kCacheOnly) return out;
  const bool wait = options_.miss_policy == MissPolicy::kTuneAndWait;
  const absl::Duration deadline =
      wait ? options_.tune_deadline : options_.lookup_deadline;
  out.kind = MissOutcome::kNotStored;
  if (warm_ != nullptr && FromWarm(key, constraints, &out)) {
    // Answered by the Warm: no Lookup.
  } else if (!link_.Ready()) {
    counters_.Add(kDaemonSkipped);
    out.kind = MissOutcome::kFailed;
  } else if (deadline > absl::ZeroDuration()) {
    counters_.Add(kDaemonCalls);
    out.reply = Waited(counters_, [&] {
      return wait ? link_.Tune(key, constraints, deadline)
                  : link_.Lookup(key, constraints, deadline,
                                 LookupPredictions());
    });
    const absl::Status& status = out.reply.status;
    if (status.ok()) {
      out.kind = AnsweredKind(out.reply);
    } else if (wait || !absl::IsNotFound(status)) {
      counters_.Add(kDaemonErrors);
      out.kind = MissOutcome::kFailed;
    }
  }
  // An answered key is stored; any other is searched in the background
  // when the caller waits for searches or asks for its misses' searches.
  out.tune_later = out.kind != MissOutcome::kAnswered &&
                   (wait || options_.tune_misses);
  return out;
}

}  // namespace tunedb
