// `tunedb prewarm --fleet`: puts the prewarm problems into the fleet
// database's job table (store/fleet/fleet_jobs.h) for every daemon serving
// their device, then shows the batch's fleet-wide progress until no job is
// queued or running. The batch is named after its keys unless
// --fleet-batch names it, so running the same command again resumes it:
// done jobs stay done, failed ones are queued again. `tunedb revalidate
// --fleet` queues revalidations the same way.
//
// Thread safety: runs on the CLI's thread.
#ifndef TUNEDB_TUNER_FLEET_PREWARM_H_
#define TUNEDB_TUNER_FLEET_PREWARM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "tunedb/problem.h"
#include "tuner/cli_context.h"
#include "tuner/prewarm_runner.h"

namespace tunedb::tuner {

struct FleetPrewarmFlags {
  std::string url;            // --fleet
  std::string password_file;  // --fleet-password-file
  std::string batch;          // --fleet-batch; "": named after the keys
  bool wait = true;           // false: --no-wait, enqueue only
  double poll_s = 0.5;        // progress refresh
  bool progress = true;
};

// --fleet, --fleet-password-file, --fleet-batch and --no-wait on `cmd`.
void AddFleetFlags(CLI::App* cmd, FleetPrewarmFlags* flags);

// The default batch name of `keys`: "prewarm-" and a hash of their texts;
// for a revalidation, "revalidate-", the old version and the hash.
std::string FleetBatchName(const std::vector<ProblemKey>& keys,
                           int revalidate_from = 0);

// Enqueues `keys` (with `revalidate_from`, a cuDNN version: as
// revalidations from it) and follows the batch; returns the exit code.
int RunFleetPrewarm(CliContext& ctx, const FleetPrewarmFlags& flags,
                    const std::vector<ProblemKey>& keys,
                    int revalidate_from = 0);

// The keys of the first `limit` of `items` (0: all), run as RunFleetPrewarm
// does with `progress` (or not), Ctrl-C stopping only the watching.
int RunFleetItems(CliContext& ctx, FleetPrewarmFlags flags, bool progress,
                  const std::vector<PrewarmItem>& items, int64_t limit,
                  int revalidate_from = 0);

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_FLEET_PREWARM_H_
