// The plan of a daemon's revalidation on start (BackgroundRevalidator,
// docs/revalidation.md): which problems a served device's cuDNN version
// lacks, and from which other version's record each is made; and which
// records stored under the device's own key were measured under an older
// driver than the device's (re-timed under the new one). It reads the
// daemon's own store and, with a fleet database, the keys the fleet holds
// for the device's GPU model (for the cuDNN form only); it writes nothing.
// A fleet that cannot be read is logged (and counted by the FleetSync) and
// leaves the local plan.
//
// Thread safety: PlanRevalidations is as thread-safe as the Store and the
// FleetSync it reads (both are).
#ifndef TUNEDB_SERVER_TUNING_REVALIDATION_PLAN_H_
#define TUNEDB_SERVER_TUNING_REVALIDATION_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/tuning/fleet_sync.h"
#include "store/store.h"
#include "tunedb/problem.h"

namespace tunedb {

// A GPU the daemon serves, as a plan reads it.
struct ServedDevice {
  DeviceKey key;
  // Its DeviceInfo::driver_version; one that cannot be read
  // (common/driver_version.h) plans no revalidation after a driver upgrade.
  std::string driver_version;
};

// One record a background revalidation makes: `problem` on `device`, from
// its record under cuDNN `from_cudnn` (cuDNN's encoding), or, where
// `from_driver` is set (and from_cudnn is 0), from the device's own key's
// record measured under that older driver.
struct RevalidationJob {
  DeviceKey device;
  ConvProblem problem;
  int from_cudnn = 0;
  std::string from_driver;
  // Where only the fleet holds the problem under `from_cudnn`: the fleet's
  // key of that record (under the device's CUDA runtime where the fleet has
  // one), to be stored locally before the revalidation reads it. nullopt:
  // the local store holds it.
  std::optional<ProblemKey> fleet_source;
};

// What a plan read: its jobs, and whether the fleet's keys were part of it.
struct RevalidationPlan {
  std::vector<RevalidationJob> jobs;
  // Whether every served GPU model's fleet keys were read: false without a
  // fleet, or where one model's read failed (its plan is local only).
  bool fleet_read = false;
};

// The jobs for `served` devices (repeats of a key counted once, with the
// first one's driver): each problem held for a device's GPU model (gpu,
// cc, sms) under another cuDNN version, here or (with `fleet`) in the
// fleet, and held under the device's own key neither here nor in the
// fleet; from the newest other version either holds. And each record
// stored here under the device's own key whose driver is older than the
// device's (DriverIsOlder; fleet records are not read for these). In the
// local store's order, then the fleet's new problems in key text order. At
// most `limit` jobs (<= 0: no limit). An error only where the local store
// cannot be read. The store is read once per served key, without plans.
absl::StatusOr<RevalidationPlan> PlanRevalidations(
    Store& store, const std::vector<ServedDevice>& served, int64_t limit,
    FleetSync* fleet = nullptr);

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_REVALIDATION_PLAN_H_
