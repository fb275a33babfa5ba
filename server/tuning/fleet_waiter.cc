#include "server/tuning/fleet_waiter.h"

#include <utility>

#include "server/tuning/fleet_sync.h"
#include "server/tuning/stored_records.h"
#include "server/tuning/tune_mode.h"

namespace tunedb {

FleetWaiter::FleetWaiter(FleetSync* fleet, StoredRecords* records,
                         Complete complete, Requeue requeue)
    : fleet_(fleet),
      records_(records),
      complete_(std::move(complete)),
      requeue_(std::move(requeue)) {
  thread_ = std::thread([this] { WaitLoop(); });
}

FleetWaiter::~FleetWaiter() { Stop(); }

bool FleetWaiter::Resolve(const std::shared_ptr<PendingSearch>& search,
                          const std::string& driver) {
  const SearchRequest& request = search->request();
  // A forced search asks nobody: it searches here and publishes. So does a
  // revalidation of a record stored here after a driver upgrade (the
  // fleet's record of the key may be the very record it re-times).
  if (request.force || request.retimes_stored || !search->FirstFleetAsk()) {
    return false;
  }
  FleetSync::Resolution fleet = fleet_->Resolve(request.key);
  if (fleet.outcome == FleetSync::Outcome::kFound) {
    std::shared_ptr<const Record> kept =
        records_->KeepFleetRecord(*std::move(fleet.record));
    // Asked to revalidate an older driver's record, the fleet's (now
    // stored here) is re-timed by the search; any other answers as it is.
    if (RetimesOlderDriver(request.revalidate_older_driver, kept.get(),
                           driver)) {
      return false;
    }
    complete_(search, std::move(kept));
    return true;
  }
  if (fleet.outcome == FleetSync::Outcome::kHeld) {
    // Another host searches it: this thread waits for its result, and the
    // device takes the next search meanwhile.
    search->MarkWaitedOnFleet();
    absl::MutexLock lock(&mu_);
    waiting_.push_back(search);
    return true;
  }
  return false;
}

std::vector<std::shared_ptr<PendingSearch>> FleetWaiter::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  cv_.SignalAll();
  if (thread_.joinable()) thread_.join();
  std::vector<std::shared_ptr<PendingSearch>> waiting;
  absl::MutexLock lock(&mu_);
  waiting.swap(waiting_);
  return waiting;
}

void FleetWaiter::WaitLoop() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    cv_.WaitWithTimeout(&mu_, fleet_->options().poll);
    if (stopping_) break;
    std::vector<std::shared_ptr<PendingSearch>> waiting;
    waiting.swap(waiting_);
    mu_.Unlock();
    std::vector<std::shared_ptr<PendingSearch>> still =
        PollOnce(std::move(waiting));
    mu_.Lock();
    waiting_.insert(waiting_.end(), still.begin(), still.end());
  }
}

std::vector<std::shared_ptr<PendingSearch>> FleetWaiter::PollOnce(
    std::vector<std::shared_ptr<PendingSearch>> waiting) {
  std::vector<std::shared_ptr<PendingSearch>> still;
  for (auto& search : waiting) {
    FleetSync::Resolution fleet = fleet_->Poll(search->key());
    switch (fleet.outcome) {
      case FleetSync::Outcome::kFound:
        complete_(search, records_->KeepFleetRecord(*std::move(fleet.record)));
        break;
      case FleetSync::Outcome::kHeld:
        still.push_back(search);
        break;
      case FleetSync::Outcome::kClaimed:
      case FleetSync::Outcome::kUnavailable:
        // Ours now (the other host's lease expired), or the fleet cannot be
        // asked: search here.
        if (!requeue_(search)) {
          complete_(search,
                    absl::UnavailableError("tunedbd is shutting down"));
        }
        break;
    }
  }
  return still;
}

}  // namespace tunedb
