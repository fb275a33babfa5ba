#include "client/warm_answers.h"

#include <utility>

#include "absl/time/clock.h"
#include "client/answer_values.h"

namespace tunedb {

WarmAnswers::WarmAnswers(absl::Duration patience, ClientCounters& counters)
    : patience_(patience), counters_(counters) {}

WarmAnswers::~WarmAnswers() {
  if (thread_.joinable()) thread_.join();
}

void WarmAnswers::Start(Fetch fetch) {
  absl::MutexLock lock(&mu_);
  if (state_ != State::kIdle) return;
  state_ = State::kInFlight;
  started_ = absl::Now();
  thread_ = std::thread(
      [this, fetch = std::move(fetch)] { Finish(fetch()); });
}

void WarmAnswers::Finish(
    absl::StatusOr<std::vector<DaemonLink::WarmEntry>> result) {
  absl::MutexLock lock(&mu_);
  state_ = State::kDone;
  if (!result.ok()) return;
  for (DaemonLink::WarmEntry& e : *result) {
    replies_.insert_or_assign(SlotText(e.key, e.constraints),
                              std::move(e.reply));
  }
  counters_.Add(kWarmKeys, static_cast<int64_t>(replies_.size()));
}

std::optional<DaemonLink::Reply> WarmAnswers::Take(
    const ProblemKey& key, const Constraints& constraints, bool may_wait) {
  absl::MutexLock lock(&mu_);
  if (state_ == State::kIdle) return std::nullopt;
  if (state_ == State::kInFlight) {
    if (!may_wait) return std::nullopt;
    mu_.AwaitWithDeadline(absl::Condition(this, &WarmAnswers::Settled),
                          started_ + patience_);
    if (state_ != State::kDone) return std::nullopt;
  }
  if (replies_.empty()) return std::nullopt;
  auto it = replies_.find(SlotText(key, constraints));
  if (it == replies_.end()) return std::nullopt;
  DaemonLink::Reply reply = std::move(it->second);
  replies_.erase(it);
  return reply;
}

}  // namespace tunedb
