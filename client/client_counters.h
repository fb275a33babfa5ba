// ClientCounters: the client's event counters (ClientStats' sources), one
// set shared by the client's parts, and Waited, which times a caller's RPC
// into kForegroundWaitUs.
//
// Thread safety: as StripedCounters: Add and Sum are thread-safe; a Sum may
// miss increments made concurrently with it.
#ifndef TUNEDB_CLIENT_CLIENT_COUNTERS_H_
#define TUNEDB_CLIENT_CLIENT_COUNTERS_H_

#include <type_traits>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/striped_counters.h"
#include "tunedb/client.h"

namespace tunedb {

enum ClientCounter {
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
  kWarmKeys,
  kWarmAnswers,
  kWarmWaitUs,
  kNumClientCounters
};

using ClientCounters = StripedCounters<kNumClientCounters>;

// The counted fields of ClientStats (not database_open, evictions,
// cache_entries and pin_unsealed, which are no counters).
ClientStats CountedStats(const ClientCounters& counters);

// `call`'s result, its wall time counted as the caller's wait on the
// daemon (ClientStats::daemon_wait_us).
template <typename Call>
std::invoke_result_t<Call> Waited(ClientCounters& counters, Call call) {
  const absl::Time start = absl::Now();
  std::invoke_result_t<Call> reply = call();
  counters.Add(kForegroundWaitUs,
               absl::ToInt64Microseconds(absl::Now() - start));
  return reply;
}

}  // namespace tunedb

#endif  // TUNEDB_CLIENT_CLIENT_COUNTERS_H_
