#include "client/miss_asker.h"

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace tunedb {

MissAsker::MissAsker(const ClientOptions& options, DaemonLink& link,
                     ClientCounters& counters)
    : options_(options), link_(link), counters_(counters) {}

DaemonLink::Predict MissAsker::LookupPredictions() const {
  if (options_.predict_misses) return DaemonLink::Predict::kAll;
  return options_.predict_from_other_versions
             ? DaemonLink::Predict::kOtherVersions
             : DaemonLink::Predict::kNone;
}

MissOutcome MissAsker::Ask(const ProblemKey& key,
                           const Constraints& constraints) {
  MissOutcome out;
  if (options_.miss_policy == MissPolicy::kCacheOnly) return out;
  const bool wait = options_.miss_policy == MissPolicy::kTuneAndWait;
  const absl::Duration deadline =
      wait ? options_.tune_deadline : options_.lookup_deadline;
  out.kind = MissOutcome::kNotStored;
  if (!link_.Ready()) {
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
      out.kind = out.reply.predicted && out.reply.choice.has_value()
                     ? MissOutcome::kPredicted
                     : MissOutcome::kAnswered;
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
