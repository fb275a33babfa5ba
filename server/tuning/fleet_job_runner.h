// FleetJobRunner: runs fleet prewarm jobs (store/fleet/fleet_jobs.h) on this
// daemon. Its threads claim jobs for the devices the core serves, run each
// as a Tune (a key stored here or in the fleet is a hit, not a search; a
// revalidation job's Tune revalidates from the job's cuDNN version, with
// the old record from this daemon's store or else from the fleet),
// renew the jobs' leases while they run, and finish them: done, or queued
// again after an error until max_attempts. A job this daemon holds when it
// stops or dies is taken by another daemon once its lease expires.
//
// Thread safety: Stop and the destructor may be called from any thread.
#ifndef TUNEDB_SERVER_TUNING_FLEET_JOB_RUNNER_H_
#define TUNEDB_SERVER_TUNING_FLEET_JOB_RUNNER_H_

#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/tuning/fleet_sync.h"
#include "server/tuning/tuning_core.h"
#include "store/fleet/fleet_jobs.h"

namespace tunedb {

class FleetJobRunner {
 public:
  struct Options {
    // Jobs run at once; 0 (default): two per device, so a device never
    // waits for the next claim.
    int parallel = 0;
    // Wait between claims while no job is queued. Default 500 ms.
    absl::Duration idle_poll = absl::Milliseconds(500);
    // A job that failed this often is marked failed. Default 3.
    int max_attempts = 3;
  };

  // Starts the threads (none where the core has no device). `jobs`, `fleet`
  // and `core` must outlive the runner.
  FleetJobRunner(const Options& options, FleetJobs* jobs, FleetSync* fleet,
                 TuningCore* core);
  ~FleetJobRunner();

  // Stops claiming; jobs running are abandoned to their leases.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void RunLoop();
  void RenewLoop();
  // Sleeps up to `d`; false when stopping.
  bool Sleep(absl::Duration d) ABSL_LOCKS_EXCLUDED(mu_);

  const Options options_;
  FleetJobs* const jobs_;
  FleetSync* const fleet_;
  TuningCore* const core_;
  std::vector<std::string> devices_;  // device key texts served

  absl::Mutex mu_;
  absl::CondVar cv_;  // with mu_: Stop was called
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::set<int64_t> running_ ABSL_GUARDED_BY(mu_);  // job ids held
  std::vector<std::thread> threads_;
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_FLEET_JOB_RUNNER_H_
