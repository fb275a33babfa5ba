#include "client/background_jobs.h"

#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "client/answer_values.h"

namespace tunedb {
namespace {

// The name that de-duplicates a job.
std::string JobName(BackgroundJobs::Kind kind, const ProblemKey& key,
                    const Constraints& c) {
  return absl::StrCat(kind == BackgroundJobs::Kind::kRefresh ? "refresh "
                                                             : "tune ",
                      SlotText(key, c));
}

}  // namespace

BackgroundJobs::BackgroundJobs(const ClientOptions& options, DaemonLink& link,
                               CachedAnswers& cached,
                               DatabaseFallback& database,
                               ClientCounters& counters)
    : options_(options),
      link_(link),
      cached_(cached),
      database_(database),
      counters_(counters) {
  worker_ = std::thread([this] { WorkerLoop(); });
}

BackgroundJobs::~BackgroundJobs() { Stop(); }

bool BackgroundJobs::Enqueue(Kind kind, const ProblemKey& key,
                             const Constraints& constraints) {
  std::string name = JobName(kind, key, constraints);
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ || queued_.count(name) != 0) return false;
    if (static_cast<int>(jobs_.size()) >=
        options_.background_queue_capacity) {
      counters_.Add(kBackgroundDropped);
      return false;
    }
    queued_.insert(name);
    jobs_.push_back(Job{kind, key, constraints, std::move(name), 0});
  }
  counters_.Add(kBackgroundEnqueued);
  return true;
}

bool BackgroundJobs::WaitIdle(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(absl::Condition(this, &BackgroundJobs::Idle),
                              timeout);
}

void BackgroundJobs::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (!worker_.joinable()) return;
  link_.Shutdown();
  worker_.join();
}

bool BackgroundJobs::Next(Job* job) {
  while (true) {
    if (database_.waiting()) {
      mu_.Unlock();
      database_.MaybeOpen();
      mu_.Lock();
    }
    mu_.AwaitWithTimeout(absl::Condition(this, &BackgroundJobs::HasWork),
                         absl::Milliseconds(DatabaseFallback::kRetryMs));
    if (stopping_) return false;
    if (jobs_.empty()) continue;
    // Respect the backoff: wait for it to end (or for shutdown).
    const int64_t wait_ms = link_.retry_at_ms() - CoarseNowMs();
    if (wait_ms > 0) {
      mu_.AwaitWithTimeout(absl::Condition(&stopping_),
                           absl::Milliseconds(wait_ms));
      continue;
    }
    *job = std::move(jobs_.front());
    jobs_.pop_front();
    if (job->kind == Kind::kTune && HeldRecently(job->key)) {
      // The daemon holds this key's search already (for another caller
      // constraint): asking again would only be held again.
      queued_.erase(job->name);
      continue;
    }
    return true;
  }
}

void BackgroundJobs::WorkerLoop() {
  mu_.Lock();
  Job job;
  while (Next(&job)) {
    busy_ = true;
    mu_.Unlock();
    const Retry retry = Run(job);
    mu_.Lock();
    busy_ = false;
    if (!stopping_ &&
        (retry == Retry::kFree ||
         (retry == Retry::kCounted && ++job.attempts < kMaxAttempts))) {
      jobs_.push_back(std::move(job));
    } else {
      queued_.erase(job.name);
    }
  }
  jobs_.clear();
  queued_.clear();
  busy_ = false;
  mu_.Unlock();
}

bool BackgroundJobs::HeldRecently(const ProblemKey& key) {
  auto it = held_.find(key.ToText());
  if (it == held_.end()) return false;
  if (CoarseNowMs() < it->second) return true;
  held_.erase(it);
  return false;
}

BackgroundJobs::Retry BackgroundJobs::Run(const Job& job) {
  const CacheSlot slot = cached_.MakeSlot(job.key, job.constraints);
  counters_.Add(kDaemonCalls);
  return job.kind == Kind::kRefresh ? RunRefresh(job, slot)
                                    : RunTune(job, slot);
}

BackgroundJobs::Retry BackgroundJobs::RunRefresh(const Job& job,
                                                 const CacheSlot& slot) {
  DaemonLink::Reply reply = link_.Lookup(
      job.key, job.constraints, options_.lookup_deadline + absl::Seconds(1));
  if (reply.status.ok() && reply.choice.has_value()) {
    std::optional<int64_t> before = cached_.MeasuredAt(slot);
    if (before.has_value() && *before != reply.measured_at_us) {
      counters_.Add(kRefreshes);
    }
    cached_.PutTuned(slot, *reply.choice, reply.measured_at_us);
    return Retry::kNo;
  }
  if (!reply.status.ok() &&
      reply.status.code() != absl::StatusCode::kNotFound) {
    counters_.Add(kDaemonErrors);
  }
  // Gone or unusable now: keep serving the cached answer until the next
  // re-check, and ask for a new search if the record is gone.
  cached_.RearmRefresh(slot);
  if (reply.status.code() == absl::StatusCode::kNotFound) {
    Enqueue(Kind::kTune, job.key, job.constraints);
  }
  return Retry::kNo;
}

BackgroundJobs::Retry BackgroundJobs::RunTune(const Job& job,
                                              const CacheSlot& slot) {
  // A miss of this program: searched while no program uses the GPU.
  DaemonLink::Reply reply =
      link_.Tune(job.key, job.constraints, options_.background_tune_deadline,
                 /*when_idle=*/true);
  if (reply.status.ok()) {
    if (reply.held) {
      // Searched once the GPU is idle and stored: a lookup after the
      // cached answer's TTL (or the next process) finds it. Asked again
      // now, under any constraints, it would only be held again.
      counters_.Add(kBackgroundHeld);
      absl::MutexLock lock(&mu_);
      held_[job.key.ToText()] =
          DeadlineAfter(CoarseNowMs(), options_.refresh_interval);
      return Retry::kNo;
    }
    if (reply.choice.has_value()) {
      counters_.Add(kBackgroundTunes);
      cached_.PutTuned(slot, *reply.choice, reply.measured_at_us);
    }
    // No choice: the negative entry already cached stays until its TTL.
    return Retry::kNo;
  }
  const absl::StatusCode code = reply.status.code();
  // Past its deadline the search still runs in the daemon (queued, or
  // waiting for the GPU to be idle): asked again later, the call joins
  // it; that is no failure, and is not counted against the attempts.
  if (code == absl::StatusCode::kDeadlineExceeded) return Retry::kFree;
  counters_.Add(kDaemonErrors);
  return code == absl::StatusCode::kUnavailable ||
                 code == absl::StatusCode::kResourceExhausted
             ? Retry::kCounted
             : Retry::kNo;
}

}  // namespace tunedb
