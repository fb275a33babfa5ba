// JobAnswers: the first Lookup answer each job got for a key and its
// constraints (LookupRequest.job), given again to every later Lookup of the
// same job, so a job's ranks and workers agree even when a search or an
// import changes the record between their lookups (docs/pins.md, "Ranks
// without a pin"). NOT_FOUND is an answer like any other.
//
// What is kept of an answer is what the ranks must agree on, not the whole
// response: its status (the message cut to kMaxMessageBytes), the choice,
// the record id and measurement time, and a prediction's candidates,
// confidence and distance (plans, errors and source keys left out; the
// last candidates dropped past kMaxAnswerBytes). A slot is kept as a
// 128-bit hash of its text. A later Lookup whose fresh answer agrees with
// that gets the fresh response whole; one whose answer changed gets the
// kept answer, without a record and a prediction's source keys. So an
// answer costs under 1 KiB (docs/reliability.md, "Job answers").
//
// Answers live in memory: a job idle for `idle_ttl` is forgotten, and past
// `max_entries` answers or `max_bytes` bytes (bytes()) new ones are given
// but not fixed (counted in not_fixed()). A restart forgets every job.
//
// Thread safety: thread-safe.
#ifndef TUNEDB_SERVER_SERVICE_JOB_ANSWERS_H_
#define TUNEDB_SERVER_SERVICE_JOB_ANSWERS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "tunedb/v1/tunedb.pb.h"

namespace tunedb {

class JobAnswers {
 public:
  // A kept status message is cut to this many bytes.
  static constexpr size_t kMaxMessageBytes = 160;
  // A kept answer (serialized) drops a prediction's last candidates past
  // this many bytes.
  static constexpr size_t kMaxAnswerBytes = 512;

  struct Options {
    // Default: a day.
    absl::Duration idle_ttl = absl::Hours(24);
    // Default: 1,048,576.
    int64_t max_entries = int64_t{1} << 20;
    // Bytes of memory the kept answers and their jobs may take (bytes()).
    // Default: 512 MiB.
    int64_t max_bytes = int64_t{512} << 20;
  };

  JobAnswers() : JobAnswers(Options{}) {}
  explicit JobAnswers(Options options) : options_(options) {}

  // The answer of `job` for `slot` (a key and its constraints, as text):
  // the one fixed by its first Lookup, which becomes `status` and
  // `*response` (see above); or, the first time, `status` and `*response`
  // as given, fixed now. Returns the status to answer with.
  absl::Status Fix(const std::string& job, const std::string& slot,
                   absl::Status status, v1::LookupResponse* response,
                   absl::Time now) ABSL_LOCKS_EXCLUDED(mu_);

  int64_t jobs() const ABSL_LOCKS_EXCLUDED(mu_);
  int64_t entries() const ABSL_LOCKS_EXCLUDED(mu_);
  // Bytes the kept answers and their jobs take: strings' heap, map nodes.
  int64_t bytes() const ABSL_LOCKS_EXCLUDED(mu_);
  // Answers given past max_entries or max_bytes.
  int64_t not_fixed() const ABSL_LOCKS_EXCLUDED(mu_);

  // What is kept of `response`, serialized (see above).
  static std::string KeptAnswer(const v1::LookupResponse& response);

 private:
  using SlotId = std::pair<uint64_t, uint64_t>;
  struct Fixed {
    absl::StatusCode code;
    std::string message;
    std::string answer;  // KeptAnswer
  };
  struct Job {
    absl::Time last_used;
    std::map<SlotId, Fixed> answers;
    int64_t bytes = 0;  // its answers' and its own, as counted in bytes_
  };
  // Drops jobs idle past idle_ttl (at most once a minute).
  void Sweep(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Keeps `fixed` as `job`'s answer for `slot` if the bounds allow.
  void Keep(const std::string& job, SlotId slot, Fixed fixed, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  mutable absl::Mutex mu_;
  std::map<std::string, Job> jobs_ ABSL_GUARDED_BY(mu_);
  int64_t entries_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t not_fixed_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time swept_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SERVICE_JOB_ANSWERS_H_
