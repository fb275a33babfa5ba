// BackgroundJobs: the client's background thread and its queue of jobs:
// Tunes of the program's misses (searched by the daemon while no program
// uses the GPU) and re-checks (Lookups) of cached tuned answers past
// ClientOptions::refresh_interval. Their answers go into CachedAnswers. A
// job is queued once (by name) and at most background_queue_capacity at a
// time; a job whose daemon was unreachable or full is retried after the
// link's backoff, at most kMaxAttempts times, and one past its deadline
// (still running in the daemon) is retried without counting. A key whose
// search the daemon holds for an idle GPU is not asked again for
// refresh_interval. Between jobs the thread opens the database file
// (DatabaseFallback::MaybeOpen).
//
// Thread safety: thread-safe. The parts passed to the constructor must
// outlive it.
#ifndef TUNEDB_CLIENT_BACKGROUND_JOBS_H_
#define TUNEDB_CLIENT_BACKGROUND_JOBS_H_

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "client/cached_answers.h"
#include "client/client_counters.h"
#include "client/daemon_link.h"
#include "client/database_fallback.h"
#include "tunedb/client_options.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

class BackgroundJobs {
 public:
  enum class Kind { kTune, kRefresh };

  // Background jobs retried after a connection failure at most this often.
  static constexpr int kMaxAttempts = 5;

  // Starts the thread.
  BackgroundJobs(const ClientOptions& options, DaemonLink& link,
                 CachedAnswers& cached, DatabaseFallback& database,
                 ClientCounters& counters);
  // Stop()s.
  ~BackgroundJobs();

  // Queues a job unless the same one is queued or running; false if not
  // queued (a duplicate, the queue full, or stopped).
  bool Enqueue(Kind kind, const ProblemKey& key,
               const Constraints& constraints) ABSL_LOCKS_EXCLUDED(mu_);

  // Waits until the queue is empty and no job runs, or `timeout` passes;
  // true if idle.
  bool WaitIdle(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);

  // Drops the queue, cancels the link's RPCs (DaemonLink::Shutdown) so a
  // running job ends, and joins the thread. Idempotent.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Job {
    Kind kind = Kind::kTune;
    ProblemKey key;
    Constraints constraints;
    std::string name;
    int attempts = 0;
  };
  // Whether a job is sent again: no, yes within kMaxAttempts (the daemon
  // was unreachable or full), or yes without counting an attempt.
  enum class Retry { kNo, kCounted, kFree };

  void WorkerLoop() ABSL_LOCKS_EXCLUDED(mu_);
  // Takes the next job to run, waiting for one (and for the link's
  // backoff); false once stopping.
  bool Next(Job* job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Runs one job and says whether to send it again.
  Retry Run(const Job& job) ABSL_LOCKS_EXCLUDED(mu_);
  Retry RunRefresh(const Job& job, const CacheSlot& slot)
      ABSL_LOCKS_EXCLUDED(mu_);
  Retry RunTune(const Job& job, const CacheSlot& slot)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Whether `key`'s search was held within refresh_interval (forgets it
  // after).
  bool HeldRecently(const ProblemKey& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool HasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || !jobs_.empty();
  }
  bool Idle() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return jobs_.empty() && !busy_;
  }

  const ClientOptions& options_;
  DaemonLink& link_;
  CachedAnswers& cached_;
  DatabaseFallback& database_;
  ClientCounters& counters_;

  absl::Mutex mu_;
  std::deque<Job> jobs_ ABSL_GUARDED_BY(mu_);
  // Names of queued or running jobs.
  std::set<std::string> queued_ ABSL_GUARDED_BY(mu_);
  // Key texts whose search the daemon held for an idle GPU, and until when
  // (CoarseNowMs) they are not asked for again: a held search may still be
  // lost (a daemon restarted before it ran).
  std::map<std::string, int64_t> held_ ABSL_GUARDED_BY(mu_);
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread worker_;
};

}  // namespace tunedb

#endif  // TUNEDB_CLIENT_BACKGROUND_JOBS_H_
