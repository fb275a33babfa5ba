#include "server/tuning/background_revalidator.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"

namespace tunedb {

BackgroundRevalidator::BackgroundRevalidator(const Options& options,
                                             Store* store, TuningCore* core,
                                             FleetSync* fleet)
    : options_(options), store_(store), core_(core), fleet_(fleet) {
  planner_ = std::thread([this] { Run(); });
}

BackgroundRevalidator::~BackgroundRevalidator() { Stop(); }

void BackgroundRevalidator::Stop() {
  stop_.store(true, std::memory_order_relaxed);
  absl::MutexLock lock(&join_mu_);
  if (planner_.joinable()) planner_.join();
}

BackgroundRevalidator::Progress BackgroundRevalidator::progress() const {
  absl::MutexLock lock(&mu_);
  return progress_;
}

bool BackgroundRevalidator::WaitFinished(absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(
      absl::Condition(+[](const Progress* p) { return p->finished; },
                      &progress_),
      timeout);
}

RevalidationPlan BackgroundRevalidator::Plan(
    const std::vector<ServedDevice>& served) {
  absl::StatusOr<RevalidationPlan> plan =
      PlanRevalidations(*store_, served, options_.max_keys, fleet_);
  if (!plan.ok()) {
    spdlog::warn("background revalidation not planned: {}",
                 plan.status().ToString());
    return RevalidationPlan();
  }
  if (plan->jobs.empty()) return *std::move(plan);
  std::set<std::string> versions;
  size_t from_fleet = 0;
  for (const RevalidationJob& j : plan->jobs) {
    versions.insert(j.from_driver.empty()
                        ? absl::StrCat("cuDNN ", CudnnVersionText(j.from_cudnn))
                        : absl::StrCat("driver ", j.from_driver));
    if (j.fleet_source) ++from_fleet;
  }
  spdlog::info(
      "revalidating {} keys in the background from {}{} (searches "
      "wait while programs use the GPU)",
      plan->jobs.size(), absl::StrJoin(versions, ", "),
      from_fleet == 0 ? ""
                      : absl::StrCat("; ", from_fleet,
                                     " from old records only the fleet holds"));
  return *std::move(plan);
}

void BackgroundRevalidator::Run() {
  std::vector<ServedDevice> served;
  for (const DeviceInfo& d : core_->devices()) {
    served.push_back({d.key, d.driver_version});
  }
  RevalidationPlan plan = Plan(served);
  const size_t planned = plan.jobs.size();
  const absl::Time start = absl::Now();
  std::vector<std::thread> workers;
  {
    absl::MutexLock lock(&mu_);
    progress_.planned = static_cast<int64_t>(planned);
    progress_.from_fleet = std::count_if(
        plan.jobs.begin(), plan.jobs.end(),
        [](const RevalidationJob& j) { return j.fleet_source.has_value(); });
    progress_.fleet_planned = plan.fleet_read;
    jobs_ = std::move(plan.jobs);
    // Each Tune goes to the least busy GPU of its key's model.
    const size_t n =
        std::min(planned, served.size() * static_cast<size_t>(
                                               std::max(1, options_.parallel)));
    workers_left_ = static_cast<int>(n);
    for (size_t i = 0; i < n; ++i) workers.emplace_back([this] { Work(); });
    if (n == 0) progress_.finished = true;
  }
  for (std::thread& t : workers) t.join();
  if (planned > 0) {
    const Progress p = progress();
    spdlog::info(
        "background revalidation {}: {} of {} keys stored, {} failed, in {}",
        p.done + p.failed < p.planned ? "stopped" : "done", p.done,
        p.planned, p.failed,
        absl::FormatDuration(absl::Trunc(absl::Now() - start,
                                         absl::Milliseconds(1))));
  }
}

absl::Status BackgroundRevalidator::KeepFleetSource(const ProblemKey& old) {
  ASSIGN_OR_RETURN(std::optional<Record> here, store_->Get(old));
  if (here) return absl::OkStatus();
  if (fleet_ == nullptr || !fleet_->Reachable()) {
    return absl::UnavailableError(
        "its old record is in the fleet, which cannot be reached now");
  }
  absl::StatusOr<std::optional<Record>> found = fleet_->fleet().Get(old);
  if (!fleet_->Succeeded(found.status(), "reading an old version's record")) {
    return found.status();
  }
  if (!*found) {
    return absl::NotFoundError("the fleet no longer holds its old record");
  }
  Record record = **std::move(found);
  record.id = 0;
  return core_->KeepRecord(std::move(record)).status();
}

absl::Status BackgroundRevalidator::Revalidate(const RevalidationJob& job) {
  if (job.fleet_source) RETURN_IF_ERROR(KeepFleetSource(*job.fleet_source));
  TuneMode mode;
  mode.when = SearchWhen::kWhenIdle;
  mode.revalidate_from_cudnn = job.from_cudnn;
  mode.revalidate_older_driver = !job.from_driver.empty();
  return core_
      ->Tune(job.problem, job.device, Constraints(), mode,
             absl::InfiniteFuture(), [this] { return stopping(); })
      .status();
}

void BackgroundRevalidator::Work() {
  while (!stopping()) {
    RevalidationJob job;
    {
      absl::MutexLock lock(&mu_);
      if (next_ >= jobs_.size()) break;
      job = jobs_[next_++];
    }
    const absl::Status revalidated = Revalidate(job);
    if (stopping()) break;
    absl::MutexLock lock(&mu_);
    if (revalidated.ok()) {
      ++progress_.done;
    } else {
      ++progress_.failed;
      spdlog::warn("background revalidation of {} failed: {}",
                   ProblemKey{job.device, job.problem}.ToText(),
                   revalidated.ToString());
    }
  }
  absl::MutexLock lock(&mu_);
  if (--workers_left_ == 0) progress_.finished = true;
}

}  // namespace tunedb
