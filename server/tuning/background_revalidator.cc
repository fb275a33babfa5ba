#include "server/tuning/background_revalidator.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_join.h"
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

// One device's jobs: the problems its model has under other cuDNN versions
// and not under its own.
absl::Status PlanFor(Store& store, const DeviceKey& device,
                     std::vector<RevalidationJob>& jobs) {
  std::set<std::string> own;  // problem texts stored for `device`
  // problem text -> its job (the newest other version), in store order
  std::map<std::string, size_t> planned;
  std::vector<RevalidationJob> mine;
  RETURN_IF_ERROR(store.Query(
      SameGpuModel(device), 0, 0, [&](const Record& r) {
        const DeviceKey& d = r.key.device;
        std::string text = r.key.problem.ToText();
        if (d.cudnn_version == device.cudnn_version) {
          // Its own version (under any CUDA runtime) is not a source.
          if (d == device) own.insert(std::move(text));
          return true;
        }
        auto [it, added] = planned.emplace(std::move(text), mine.size());
        if (added) {
          mine.push_back({device, r.key.problem, d.cudnn_version});
        } else {
          int& from = mine[it->second].from_cudnn;
          from = std::max(from, d.cudnn_version);
        }
        return true;
      }));
  for (RevalidationJob& job : mine) {
    if (own.count(job.problem.ToText()) == 0) jobs.push_back(std::move(job));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<RevalidationJob>> PlanRevalidations(
    Store& store, const std::vector<DeviceKey>& served, int64_t limit) {
  std::vector<RevalidationJob> jobs;
  std::vector<DeviceKey> seen;
  for (const DeviceKey& device : served) {
    if (std::find(seen.begin(), seen.end(), device) != seen.end()) continue;
    seen.push_back(device);
    RETURN_IF_ERROR(PlanFor(store, device, jobs));
  }
  if (limit > 0 && static_cast<int64_t>(jobs.size()) > limit) {
    jobs.resize(static_cast<size_t>(limit));
  }
  return jobs;
}

BackgroundRevalidator::BackgroundRevalidator(const Options& options,
                                             Store* store, TuningCore* core)
    : options_(options), store_(store), core_(core) {
  planner_ = std::thread([this] { Run(); });
}

BackgroundRevalidator::~BackgroundRevalidator() { Stop(); }

void BackgroundRevalidator::Stop() {
  stop_.store(true, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(join_mu_);
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

void BackgroundRevalidator::Run() {
  std::vector<DeviceKey> served;
  for (const DeviceInfo& d : core_->devices()) served.push_back(d.key);
  absl::StatusOr<std::vector<RevalidationJob>> jobs =
      PlanRevalidations(*store_, served, options_.max_keys);
  if (!jobs.ok()) {
    spdlog::warn("background revalidation not planned: {}",
                 jobs.status().ToString());
  }
  const size_t planned = jobs.ok() ? jobs->size() : 0;
  const absl::Time start = absl::Now();
  if (planned > 0) {
    std::set<std::string> versions;
    for (const RevalidationJob& j : *jobs) {
      versions.insert(CudnnVersionText(j.from_cudnn));
    }
    spdlog::info(
        "revalidating {} keys in the background from cuDNN {} (searches "
        "wait while programs use the GPU)",
        planned, absl::StrJoin(versions, ", "));
  }
  std::vector<std::thread> workers;
  {
    absl::MutexLock lock(&mu_);
    if (jobs.ok()) jobs_ = *std::move(jobs);
    progress_.planned = static_cast<int64_t>(planned);
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

void BackgroundRevalidator::Work() {
  while (!stopping()) {
    RevalidationJob job;
    {
      absl::MutexLock lock(&mu_);
      if (next_ >= jobs_.size()) break;
      job = jobs_[next_++];
    }
    TuneMode mode;
    mode.when = SearchWhen::kWhenIdle;
    mode.revalidate_from_cudnn = job.from_cudnn;
    absl::StatusOr<TuneAnswer> answer =
        core_->Tune(job.problem, job.device, Constraints(), mode,
                    absl::InfiniteFuture(), [this] { return stopping(); });
    if (stopping()) break;
    absl::MutexLock lock(&mu_);
    if (answer.ok()) {
      ++progress_.done;
    } else {
      ++progress_.failed;
      spdlog::warn("background revalidation of {} failed: {}",
                   ProblemKey{job.device, job.problem}.ToText(),
                   answer.status().ToString());
    }
  }
  absl::MutexLock lock(&mu_);
  if (--workers_left_ == 0) progress_.finished = true;
}

}  // namespace tunedb
