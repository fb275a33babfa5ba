#include "server/tuning/fleet_job_runner.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/time/clock.h"
#include "spdlog/spdlog.h"

namespace tunedb {

FleetJobRunner::FleetJobRunner(const Options& options, FleetJobs* jobs,
                               FleetSync* fleet, TuningCore* core)
    : options_(options), jobs_(jobs), fleet_(fleet), core_(core) {
  for (const DeviceInfo& d : core_->devices()) {
    const std::string text = d.key.ToText();
    if (std::find(devices_.begin(), devices_.end(), text) == devices_.end()) {
      devices_.push_back(text);
    }
  }
  if (devices_.empty()) return;
  const int parallel =
      options_.parallel > 0 ? options_.parallel
                            : 2 * static_cast<int>(core_->devices().size());
  for (int i = 0; i < parallel; ++i) {
    threads_.emplace_back([this] { RunLoop(); });
  }
  threads_.emplace_back([this] { RenewLoop(); });
}

FleetJobRunner::~FleetJobRunner() { Stop(); }

void FleetJobRunner::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

bool FleetJobRunner::Sleep(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  const absl::Time deadline = absl::Now() + d;
  while (!stop_ && !cv_.WaitWithDeadline(&mu_, deadline)) {
  }
  return !stop_;
}

void FleetJobRunner::RunLoop() {
  const std::string& holder = fleet_->holder();
  const absl::Duration lease = fleet_->options().lease;
  auto stopping = [this] {
    absl::MutexLock lock(&mu_);
    return stop_;
  };
  while (!stopping()) {
    if (!fleet_->Reachable()) {
      if (!Sleep(fleet_->options().retry)) return;
      continue;
    }
    absl::StatusOr<std::optional<FleetJob>> claimed =
        jobs_->Claim(devices_, holder, lease);
    if (!fleet_->Succeeded(claimed.status(), "claiming a prewarm job") ||
        !*claimed) {
      if (!Sleep(claimed.ok() ? options_.idle_poll : fleet_->options().retry)) {
        return;
      }
      continue;
    }
    const FleetJob job = **claimed;
    {
      absl::MutexLock lock(&mu_);
      running_.insert(job.id);
    }
    TuneMode mode;
    mode.revalidate_from_cudnn = job.revalidate_from;
    absl::StatusOr<TuneAnswer> answer =
        core_->Tune(job.key.problem, job.key.device, Constraints{}, mode,
                    absl::InfiniteFuture(), stopping);
    {
      absl::MutexLock lock(&mu_);
      running_.erase(job.id);
    }
    if (absl::IsCancelled(answer.status()) && stopping()) return;
    if (!answer.ok()) {
      spdlog::warn("fleet prewarm job {} failed (attempt {}): {}", job.id,
                   job.attempts, answer.status().ToString());
    }
    absl::Status finished =
        jobs_->Finish(job, holder,
                      answer.ok() &&
                          (answer->searched || answer->waited_for_search),
                      answer.status(), options_.max_attempts);
    if (fleet_->Succeeded(finished, "finishing a prewarm job")) {
      fleet_->CountJobDone();
    }
  }
}

void FleetJobRunner::RenewLoop() {
  const absl::Duration lease = fleet_->options().lease;
  while (Sleep(lease / 3)) {
    std::vector<int64_t> ids;
    {
      absl::MutexLock lock(&mu_);
      ids.assign(running_.begin(), running_.end());
    }
    if (ids.empty()) continue;
    fleet_->Succeeded(jobs_->Renew(ids, fleet_->holder(), lease),
                 "renewing prewarm job leases");
  }
}

}  // namespace tunedb
