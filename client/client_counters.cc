#include "client/client_counters.h"

namespace tunedb {

ClientStats CountedStats(const ClientCounters& counters) {
  ClientStats s;
  s.hits = counters.Sum(kHits);
  s.misses = counters.Sum(kMisses);
  s.gets = s.hits + s.misses;
  s.daemon_calls = counters.Sum(kDaemonCalls);
  s.daemon_answers = counters.Sum(kDaemonAnswers);
  s.daemon_errors = counters.Sum(kDaemonErrors);
  s.daemon_skipped = counters.Sum(kDaemonSkipped);
  s.fallbacks = counters.Sum(kFallbacks);
  s.none_answers = counters.Sum(kNoneAnswers);
  s.background_enqueued = counters.Sum(kBackgroundEnqueued);
  s.background_dropped = counters.Sum(kBackgroundDropped);
  s.background_tunes = counters.Sum(kBackgroundTunes);
  s.background_held = counters.Sum(kBackgroundHeld);
  s.daemon_wait_us = counters.Sum(kForegroundWaitUs);
  s.warm_keys = counters.Sum(kWarmKeys);
  s.warm_answers = counters.Sum(kWarmAnswers);
  s.warm_wait_us = counters.Sum(kWarmWaitUs);
  s.refreshes = counters.Sum(kRefreshes);
  s.plans_refused = counters.Sum(kPlansRefused);
  s.predicted_answers = counters.Sum(kPredictedAnswers);
  s.pinned_answers = counters.Sum(kPinnedAnswers);
  s.pin_misses = counters.Sum(kPinMisses);
  s.pin_refused = counters.Sum(kPinRefused);
  s.database_answers = counters.Sum(kDatabaseAnswers);
  return s;
}

}  // namespace tunedb
