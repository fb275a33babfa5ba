// MissAsker: the one rule for what a cache miss asks the daemon, by
// ClientOptions::miss_policy: kCacheOnly asks nothing; kTuneAndWait a Tune
// with tune_deadline on the caller's thread; kBackground a Lookup with
// lookup_deadline (none when it is 0), which may answer with a prediction
// (predict_misses, predict_from_other_versions). While the link backs off
// nothing is asked. The outcome says what the daemon gave and whether the
// key is then to be tuned in the background; what the caller answers with
// (a heuristic, the database file, none) is the caller's.
//
// Thread safety: thread-safe (it only reads options and calls the
// thread-safe DaemonLink and counters).
#ifndef TUNEDB_CLIENT_MISS_ASKER_H_
#define TUNEDB_CLIENT_MISS_ASKER_H_

#include "client/client_counters.h"
#include "client/daemon_link.h"
#include "tunedb/client_options.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

struct MissOutcome {
  enum Kind {
    kCacheOnly,  // kCacheOnly: nothing asked, the answer is none
    kAnswered,   // the daemon answered: reply.choice, if one fits
    kPredicted,  // a prediction (reply.choice), the key itself not tuned
    kNotStored,  // nothing stored (NOT_FOUND), or nothing asked
    kFailed,     // backed off from (not asked), or the call failed
  };
  Kind kind = kCacheOnly;
  DaemonLink::Reply reply;
  // Queue a background Tune of the key once answered.
  bool tune_later = false;
};

class MissAsker {
 public:
  // `link` and `counters` outlive it.
  MissAsker(const ClientOptions& options, DaemonLink& link,
            ClientCounters& counters);

  // Asks the daemon about a missed `key` under `constraints`, as the
  // policy says; counts the call (daemon_calls, daemon_skipped,
  // daemon_errors, daemon_wait_us). A Lookup's NOT_FOUND is kNotStored;
  // any other failure (any failed Tune) is kFailed.
  MissOutcome Ask(const ProblemKey& key, const Constraints& constraints);

 private:
  // The predictions a Lookup miss may be answered with.
  DaemonLink::Predict LookupPredictions() const;

  const ClientOptions& options_;
  DaemonLink& link_;
  ClientCounters& counters_;
};

}  // namespace tunedb

#endif  // TUNEDB_CLIENT_MISS_ASKER_H_
