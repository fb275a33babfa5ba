#include "server/tuning/pending_search.h"

#include <algorithm>
#include <utility>

namespace tunedb {

bool PendingSearch::when_idle() const {
  absl::MutexLock lock(&mu_);
  return when_idle_;
}

void PendingSearch::RunNow() {
  absl::MutexLock lock(&mu_);
  when_idle_ = false;
  held_ = false;
}

bool PendingSearch::HoldForPrograms() {
  absl::MutexLock lock(&mu_);
  if (counted_waiting_) return false;
  counted_waiting_ = true;
  held_ = true;
  cv_.SignalAll();
  return true;
}

void PendingSearch::MarkHeld() {
  absl::MutexLock lock(&mu_);
  held_ = true;
  cv_.SignalAll();
}

void PendingSearch::Taken() {
  absl::MutexLock lock(&mu_);
  held_ = false;
}

bool PendingSearch::FirstFleetAsk() {
  absl::MutexLock lock(&mu_);
  const bool first = !fleet_asked_;
  fleet_asked_ = true;
  return first;
}

void PendingSearch::MarkWaitedOnFleet() {
  absl::MutexLock lock(&mu_);
  waited_on_fleet_ = true;
}

void PendingSearch::Finish(
    absl::StatusOr<std::shared_ptr<const Record>> result, bool searched) {
  absl::MutexLock lock(&mu_);
  result_ = std::move(result);
  searched_ = searched;
  done_ = true;
  cv_.SignalAll();
}

absl::StatusOr<SearchOutcome> PendingSearch::Wait(
    bool return_if_held, absl::Time deadline,
    const std::function<bool()>& cancelled) {
  absl::MutexLock lock(&mu_);
  while (!done_) {
    if (return_if_held && held_) {
      SearchOutcome held;
      held.held = true;
      return held;
    }
    const absl::Time wake =
        std::min(deadline, absl::Now() + absl::Milliseconds(50));
    cv_.WaitWithDeadline(&mu_, wake);
    if (done_) break;
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          "deadline passed while the search ran; its result will be stored "
          "for the next request");
    }
    if (cancelled && cancelled()) {
      return absl::CancelledError("the caller went away");
    }
  }
  if (!result_.ok()) return result_.status();
  SearchOutcome outcome;
  outcome.record = *result_;
  outcome.searched = searched_;
  outcome.waited_on_fleet = waited_on_fleet_;
  return outcome;
}

}  // namespace tunedb
