// FleetJobs: the fleet prewarm job table (fleet_jobs). `tunedb prewarm
// --fleet` enqueues a batch of keys (`tunedb revalidate --fleet` a batch
// of revalidations); every daemon serving a job's device
// claims jobs (FOR UPDATE SKIP LOCKED, so no two daemons take one job),
// holds each under a lease it renews while the search runs, and finishes it.
// A job whose lease expired (its daemon died) is claimed again by another.
// Enqueueing a batch again adds only the keys it lacks and queues its failed
// jobs once more, so a re-run resumes.
//
// Thread safety: all methods are thread-safe.
#ifndef TUNEDB_STORE_FLEET_FLEET_JOBS_H_
#define TUNEDB_STORE_FLEET_FLEET_JOBS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tunedb/problem.h"

namespace tunedb {

class FleetDatabase;
struct FleetOptions;

struct FleetJob {
  int64_t id = 0;
  std::string batch;
  ProblemKey key;
  int attempts = 0;  // claims so far, this one included
  // A revalidation from this other cuDNN version (TuneMode); 0: a search.
  int revalidate_from = 0;
};

// A batch's jobs by state.
struct FleetBatchProgress {
  int64_t queued = 0;
  int64_t running = 0;
  int64_t done = 0;
  int64_t failed = 0;
  int64_t searched = 0;  // done jobs whose daemon ran a search (not a hit)
  // Up to 5 failed jobs' errors.
  std::vector<std::string> errors;
  int64_t total() const { return queued + running + done + failed; }
};

// What Enqueue did.
struct FleetEnqueued {
  int64_t added = 0;     // new jobs
  int64_t requeued = 0;  // failed jobs queued again
};

class FleetJobs {
 public:
  // Connects and migrates (FleetDatabase::Open).
  static absl::StatusOr<std::unique_ptr<FleetJobs>> Open(
      const FleetOptions& options);
  explicit FleetJobs(std::shared_ptr<FleetDatabase> db);
  ~FleetJobs();

  // Adds the keys to `batch` (keys it holds already are kept as they are)
  // and queues its failed jobs again. With `revalidate_from` (a cuDNN
  // version), each new job revalidates its key from that version's records
  // instead of searching it (docs/revalidation.md). FAILED_PRECONDITION
  // where `batch` holds jobs of another kind (nothing added).
  absl::StatusOr<FleetEnqueued> Enqueue(const std::string& batch,
                                        const std::vector<ProblemKey>& keys,
                                        int revalidate_from = 0);

  // Claims the oldest claimable job for one of `device_texts`
  // (DeviceKey::ToText()): queued, or running under an expired lease.
  absl::StatusOr<std::optional<FleetJob>> Claim(
      const std::vector<std::string>& device_texts, const std::string& holder,
      absl::Duration lease);
  // Extends `holder`'s leases on these jobs.
  absl::Status Renew(const std::vector<int64_t>& ids,
                     const std::string& holder, absl::Duration lease);
  // Marks a job done (`searched`: a search ran for it) or, on `error`,
  // queues it again while attempts < max_attempts and fails it after.
  // Ignored where `holder` no longer holds it (its lease expired and
  // another daemon took it).
  absl::Status Finish(const FleetJob& job, const std::string& holder,
                      bool searched, const absl::Status& error,
                      int max_attempts);

  absl::StatusOr<FleetBatchProgress> Progress(const std::string& batch);

  const std::string& display() const;

 private:
  const std::shared_ptr<FleetDatabase> db_;
};

}  // namespace tunedb

#endif  // TUNEDB_STORE_FLEET_FLEET_JOBS_H_
