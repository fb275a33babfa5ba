#include "server/service/job_answers.h"

#include <utility>

namespace tunedb {

absl::Status JobAnswers::Fix(const std::string& job, const std::string& slot,
                             absl::Status status,
                             v1::LookupResponse* response, absl::Time now) {
  absl::MutexLock lock(&mu_);
  Sweep(now);
  Job& j = jobs_[job];
  j.last_used = now;
  auto it = j.answers.find(slot);
  if (it != j.answers.end()) {
    *response = it->second.response;
    return it->second.status;
  }
  if (entries_ >= options_.max_entries) {
    ++not_fixed_;
    if (j.answers.empty()) jobs_.erase(job);
    return status;
  }
  j.answers.emplace(slot, Fixed{status, *response});
  ++entries_;
  return status;
}

void JobAnswers::Sweep(absl::Time now) {
  if (now - swept_ < absl::Minutes(1)) return;
  swept_ = now;
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    if (now - it->second.last_used > options_.idle_ttl) {
      entries_ -= static_cast<int64_t>(it->second.answers.size());
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
}

int64_t JobAnswers::jobs() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(jobs_.size());
}

int64_t JobAnswers::entries() const {
  absl::MutexLock lock(&mu_);
  return entries_;
}

int64_t JobAnswers::not_fixed() const {
  absl::MutexLock lock(&mu_);
  return not_fixed_;
}

}  // namespace tunedb
