// MissAsker: the one rule for what a cache miss asks the daemon, by
// ClientOptions::miss_policy: kCacheOnly asks nothing; kTuneAndWait a Tune
// with tune_deadline on the caller's thread; kBackground a Lookup with
// lookup_deadline (none when it is 0), which may answer with a prediction
// (predict_misses, predict_from_other_versions). While the link backs off
// nothing is asked. With a program and warm_at_start (kBackground), the
// first miss starts the Warm (WarmAnswers) for its key's device, and a
// miss the Warm answered takes that reply instead of a Lookup. The outcome
// says what the daemon gave and whether the key is then to be tuned in the
// background; what the caller answers with (a heuristic, the database
// file, none) is the caller's.
//
// Thread safety: thread-safe (it only reads options and calls the
// thread-safe DaemonLink, WarmAnswers and counters). Its destructor waits
// for the Warm's thread: the link is shut down first.
#ifndef TUNEDB_CLIENT_MISS_ASKER_H_
#define TUNEDB_CLIENT_MISS_ASKER_H_

#include <memory>

#include "client/client_counters.h"
#include "client/daemon_link.h"
#include "client/warm_answers.h"
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
  // daemon_errors, daemon_wait_us) or the Warm's answer (warm_answers,
  // warm_wait_us). A Lookup's NOT_FOUND is kNotStored; any other failure
  // (any failed Tune) is kFailed.
  MissOutcome Ask(const ProblemKey& key, const Constraints& constraints);

 private:
  // The predictions a Lookup miss may be answered with.
  DaemonLink::Predict LookupPredictions() const;
  // The Warm's reply for `key` under `constraints` into `out` (true), once
  // the Warm is started; waits for it only while the link is ready.
  bool FromWarm(const ProblemKey& key, const Constraints& constraints,
                MissOutcome* out);

  const ClientOptions& options_;
  DaemonLink& link_;
  ClientCounters& counters_;
  std::unique_ptr<WarmAnswers> warm_;  // null without a Warm at start
};

}  // namespace tunedb

#endif  // TUNEDB_CLIENT_MISS_ASKER_H_
