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
#include <mutex>
#include <string>

#include "absl/status/status.h"
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
                   absl::Time now);

  int64_t jobs() const;
  int64_t entries() const;
  int64_t not_fixed() const;  // answers given past max_entries

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
  void Sweep(absl::Time now);

  const Options options_;
  mutable std::mutex mu_;
  std::map<std::string, Job> jobs_;  // guarded by mu_
  int64_t entries_ = 0;              // guarded by mu_
  int64_t not_fixed_ = 0;            // guarded by mu_
  absl::Time swept_ = absl::InfinitePast();  // guarded by mu_
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SERVICE_JOB_ANSWERS_H_
