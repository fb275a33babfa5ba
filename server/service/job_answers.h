// JobAnswers: the first Lookup answer each job got for a key and its
// constraints (LookupRequest.job), given again to every later Lookup of the
// same job, so a job's ranks and workers agree even when a search or an
// import changes the record between their lookups (docs/pins.md, "Ranks
// without a pin"). NOT_FOUND is an answer like any other.
//
// Answers live in memory: a job idle for `idle_ttl` is forgotten, and past
// `max_entries` answers new ones are given but not fixed (counted). A
// restart forgets every job.
//
// Thread safety: thread-safe.
#ifndef TUNEDB_SERVER_SERVICE_JOB_ANSWERS_H_
#define TUNEDB_SERVER_SERVICE_JOB_ANSWERS_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "tunedb/v1/tunedb.pb.h"

namespace tunedb {

class JobAnswers {
 public:
  struct Options {
    // Default: a day.
    absl::Duration idle_ttl = absl::Hours(24);
    // Default: 1,048,576 (a few hundred bytes each).
    int64_t max_entries = int64_t{1} << 20;
  };

  JobAnswers() : JobAnswers(Options{}) {}
  explicit JobAnswers(Options options) : options_(options) {}

  // The answer of `job` for `slot` (a key and its constraints, as text):
  // the one fixed by its first Lookup, which becomes `status` and
  // `*response`; or, the first time, `status` and `*response` as given,
  // fixed now. Returns the status to answer with.
  absl::Status Fix(const std::string& job, const std::string& slot,
                   absl::Status status, v1::LookupResponse* response,
                   absl::Time now) ABSL_LOCKS_EXCLUDED(mu_);

  int64_t jobs() const ABSL_LOCKS_EXCLUDED(mu_);
  int64_t entries() const ABSL_LOCKS_EXCLUDED(mu_);
  // Answers given past max_entries.
  int64_t not_fixed() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Fixed {
    absl::Status status;
    v1::LookupResponse response;
  };
  struct Job {
    absl::Time last_used;
    std::map<std::string, Fixed> answers;
  };
  // Drops jobs idle past idle_ttl (at most once a minute).
  void Sweep(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  mutable absl::Mutex mu_;
  std::map<std::string, Job> jobs_ ABSL_GUARDED_BY(mu_);
  int64_t entries_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t not_fixed_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time swept_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SERVICE_JOB_ANSWERS_H_
