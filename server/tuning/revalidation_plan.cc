#include "server/tuning/revalidation_plan.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/driver_version.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"

namespace tunedb {
namespace {

// The records of `device`'s GPU model, whatever their versions.
RecordFilter SameGpuModel(const DeviceKey& device) {
  return RecordFilter::OfKeyFieldsBut(
      ProblemKey{device, ConvProblem()}, [](const std::string& name) {
        return name != "gpu" && name != "cc" && name != "sms";
      });
}

// Whether `key` is of `device`'s GPU model (gpu, cc, sms).
bool OfGpuModel(const DeviceKey& key, const DeviceKey& device) {
  return key.gpu_model == device.gpu_model &&
         key.cc_major == device.cc_major && key.cc_minor == device.cc_minor &&
         key.sm_count == device.sm_count;
}

// What one problem has on a device's GPU model, here and in the fleet.
struct Holding {
  ConvProblem problem;
  bool own = false;    // held under the device's own key, here or there
  int local_from = 0;  // the newest other cuDNN version stored here
  int fleet_from = 0;  // the newest other cuDNN version in the fleet
  std::optional<ProblemKey> fleet_key;  // the fleet's key under fleet_from
  // The driver of the record stored here under the device's own key; "":
  // none stored here.
  std::string own_driver;
};

// One device's holdings, problem by problem, in the order first seen.
class Holdings {
 public:
  explicit Holdings(const ServedDevice& device)
      : device_(device.key), driver_(device.driver_version) {}

  // `key` (of the device's GPU model) is held here or, `in_fleet`, there;
  // `driver`: the driver_version of the record here.
  void Add(const ProblemKey& key, bool in_fleet,
           const std::string& driver = "") {
    const DeviceKey& d = key.device;
    auto [it, added] = index_.emplace(key.problem.ToText(), holdings_.size());
    if (added) holdings_.emplace_back().problem = key.problem;
    Holding& h = holdings_[it->second];
    if (d.cudnn_version == device_.cudnn_version) {
      // Its own version (under any CUDA runtime) is not a source.
      if (d == device_) {
        h.own = true;
        if (!in_fleet) h.own_driver = driver;
      }
      return;
    }
    if (!in_fleet) {
      h.local_from = std::max(h.local_from, d.cudnn_version);
      return;
    }
    // Under the newest version, the device's CUDA runtime first, as the
    // core reads a source from the fleet itself.
    if (d.cudnn_version > h.fleet_from ||
        (d.cudnn_version == h.fleet_from &&
         d.cuda_runtime_version == device_.cuda_runtime_version)) {
      h.fleet_from = d.cudnn_version;
      h.fleet_key = key;
    }
  }

  // The problems not held under the device's key but under another version,
  // and those held here under it from an older driver.
  void AppendJobs(std::vector<RevalidationJob>& jobs) const {
    for (const Holding& h : holdings_) {
      if (h.own && DriverIsOlder(h.own_driver, driver_)) {
        RevalidationJob& job = jobs.emplace_back();
        job.device = device_;
        job.problem = h.problem;
        job.from_driver = h.own_driver;
        continue;
      }
      const int from = std::max(h.local_from, h.fleet_from);
      if (h.own || from == 0) continue;
      RevalidationJob& job = jobs.emplace_back();
      job.device = device_;
      job.problem = h.problem;
      job.from_cudnn = from;
      if (h.fleet_from > h.local_from) job.fleet_source = h.fleet_key;
    }
  }

 private:
  const DeviceKey device_;
  const std::string driver_;  // the device's driver_version
  std::map<std::string, size_t> index_;  // problem text -> holdings_ index
  std::vector<Holding> holdings_;
};

// The fleet's keys of GPU model `gpu_model`, parsed (a text this build
// cannot parse, a newer tunedb's, is left out); nullopt where the fleet
// cannot be read now (counted and logged by `fleet`).
std::optional<std::vector<ProblemKey>> FleetKeysOf(
    FleetSync& fleet, const std::string& gpu_model) {
  if (!fleet.Reachable()) return std::nullopt;
  absl::StatusOr<std::vector<std::string>> texts =
      fleet.fleet().KeyTextsOfModel(gpu_model);
  if (!fleet.Succeeded(texts.status(), "listing the fleet's keys")) {
    return std::nullopt;
  }
  std::vector<ProblemKey> keys;
  size_t unreadable = 0;
  for (const std::string& text : *texts) {
    absl::StatusOr<ProblemKey> key = ProblemKey::Parse(text);
    if (key.ok()) {
      keys.push_back(*std::move(key));
    } else {
      ++unreadable;
    }
  }
  if (unreadable > 0) {
    spdlog::warn("background revalidation: {} of the fleet's keys of {} "
                 "cannot be read by this build; left out",
                 unreadable, gpu_model);
  }
  return keys;
}

}  // namespace

absl::StatusOr<RevalidationPlan> PlanRevalidations(
    Store& store, const std::vector<ServedDevice>& served, int64_t limit,
    FleetSync* fleet) {
  RevalidationPlan plan;
  plan.fleet_read = fleet != nullptr;
  // The fleet's keys of each GPU model it was asked for; nullopt where they
  // could not be read (asked once).
  std::map<std::string, std::optional<std::vector<ProblemKey>>> fleet_keys;
  std::vector<DeviceKey> seen;
  for (const ServedDevice& served_device : served) {
    const DeviceKey& device = served_device.key;
    if (std::find(seen.begin(), seen.end(), device) != seen.end()) continue;
    seen.push_back(device);
    Holdings holdings(served_device);
    RecordFilter local = SameGpuModel(device);
    local.without_plans = true;  // only keys and drivers are planned from
    RETURN_IF_ERROR(store.Query(local, 0, 0, [&](const Record& r) {
      holdings.Add(r.key, /*in_fleet=*/false, r.driver_version);
      return true;
    }));
    if (fleet != nullptr && fleet_keys.count(device.gpu_model) == 0) {
      fleet_keys[device.gpu_model] = FleetKeysOf(*fleet, device.gpu_model);
      if (!fleet_keys[device.gpu_model]) plan.fleet_read = false;
    }
    if (fleet != nullptr && fleet_keys[device.gpu_model]) {
      for (const ProblemKey& key : *fleet_keys[device.gpu_model]) {
        if (OfGpuModel(key.device, device)) holdings.Add(key, true);
      }
    }
    holdings.AppendJobs(plan.jobs);
  }
  if (fleet != nullptr && !plan.fleet_read) {
    spdlog::warn("background revalidation plans from this daemon's records "
                 "only for GPU models whose fleet keys cannot be read now");
  }
  if (limit > 0 && static_cast<int64_t>(plan.jobs.size()) > limit) {
    plan.jobs.resize(static_cast<size_t>(limit));
  }
  return plan;
}

}  // namespace tunedb
