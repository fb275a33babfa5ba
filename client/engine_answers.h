// EngineAnswers: Client::GetEngine's answers without a pin: engine configs
// for graph-API keys, cached in process by key and constraints (a graph is
// asked for once, not per launch, so a map under a lock does), and the
// miss path: what MissAsker gets from the daemon (a stored plan only whole
// and for its key and config), else the database file's choice while the
// daemon is down, else none (never a heuristic). A none is cached for
// ClientOptions::negative_ttl; a full map (cache_capacity) starts over.
//
// Thread safety: thread-safe. The parts passed to the constructor must
// outlive it.
#ifndef TUNEDB_CLIENT_ENGINE_ANSWERS_H_
#define TUNEDB_CLIENT_ENGINE_ANSWERS_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "client/background_jobs.h"
#include "client/client_counters.h"
#include "client/database_fallback.h"
#include "client/miss_asker.h"
#include "tunedb/client.h"
#include "tunedb/client_options.h"

namespace tunedb {

class EngineAnswers {
 public:
  EngineAnswers(const ClientOptions& options, MissAsker& asker,
                DatabaseFallback& database, BackgroundJobs& jobs,
                ClientCounters& counters);

  // The answer for `key` under final `constraints`: the cached one (a hit,
  // kCache when ok), else the miss path's (a miss).
  EngineAnswer Get(const ProblemKey& key, const Constraints& constraints)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Drops every cached answer.
  void Clear() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Entry {
    EngineAnswer answer;
    int64_t expires_ms = 0;  // for answers that are not ok()
  };

  // The miss path's answer.
  EngineAnswer Miss(const ProblemKey& key, const Constraints& constraints);

  const ClientOptions& options_;
  MissAsker& asker_;
  DatabaseFallback& database_;
  BackgroundJobs& jobs_;
  ClientCounters& counters_;

  absl::Mutex mu_;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);  // by SlotText
};

}  // namespace tunedb

#endif  // TUNEDB_CLIENT_ENGINE_ANSWERS_H_
