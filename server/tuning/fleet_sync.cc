#include "server/tuning/fleet_sync.h"

#include <unistd.h>

#include <random>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "spdlog/spdlog.h"

namespace tunedb {
namespace {

// How often failures are logged while the fleet stays unreachable.
constexpr absl::Duration kLogEvery = absl::Seconds(10);

std::string DefaultHolder() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  std::random_device random;
  return absl::StrFormat("%s/%d/%08x", host, getpid(), random());
}

// A fleet record answers a Tune unless it is stale (measured before launch
// timing), which is searched again as a local one would be.
bool Answers(const std::optional<Record>& record) {
  return record.has_value() && !record->stale();
}

}  // namespace

FleetSync::FleetSync(const Options& options, FleetStore* fleet, Store* store)
    : options_(options), fleet_(fleet), store_(store) {
  if (options_.holder.empty()) options_.holder = DefaultHolder();
  if (options_.publish_batch < 1) options_.publish_batch = 1;
  drainer_ = std::thread([this] { DrainLoop(); });
  renewer_ = std::thread([this] { RenewLoop(); });
}

FleetSync::~FleetSync() { Stop(); }

void FleetSync::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.SignalAll();
  if (drainer_.joinable()) drainer_.join();
  if (renewer_.joinable()) renewer_.join();
  // Whatever could not be published stays in the outbox for the next start.
  DrainOnce().IgnoreError();
}

bool FleetSync::Succeeded(const absl::Status& status, const char* what) {
  if (status.ok()) {
    if (!connected_.exchange(true)) {
      spdlog::info("fleet database {} reachable", fleet_->display());
    }
    return true;
  }
  errors_.fetch_add(1, std::memory_order_relaxed);
  const bool was_connected = connected_.exchange(false);
  // A database that cannot be reached (or refuses the credentials) is named
  // first, whichever operation met it: the operation is the least of it.
  const bool connection = absl::IsUnavailable(status) ||
                          absl::IsUnauthenticated(status);
  std::string message =
      connection ? absl::StrCat(status.message(), " (while ", what, ")")
                 : absl::StrCat(what, ": ", status.ToString());
  {
    absl::MutexLock lock(&mu_);
    // Only errors of reaching the database open the retry window; an SQL
    // error of one statement does not make the database unreachable.
    if (!absl::IsInternal(status) && !absl::IsDataLoss(status)) {
      skip_until_ = absl::Now() + options_.retry;
    }
    last_error_ = message;
    last_error_us_ = absl::ToUnixMicros(absl::Now());
    // While the database stays down, one line per kLogEvery, not one per
    // attempt.
    if (!was_connected && absl::Now() - last_logged_ < kLogEvery) return false;
    last_logged_ = absl::Now();
  }
  spdlog::warn("fleet: {} (serving and searching locally meanwhile)",
               message);
  return false;
}

bool FleetSync::Reachable() {
  absl::MutexLock lock(&mu_);
  return absl::Now() >= skip_until_;
}

std::optional<Record> FleetSync::Fetch(const ValidKey& key) {
  if (!Reachable()) return std::nullopt;
  absl::StatusOr<std::optional<Record>> found = fleet_->Get(key.key());
  if (!Succeeded(found.status(), "reading a record")) return std::nullopt;
  if (*found) fetched_.fetch_add(1, std::memory_order_relaxed);
  return *std::move(found);
}

FleetSync::Resolution FleetSync::Resolve(const ValidKey& key) {
  return Ask(key, /*first=*/true);
}

FleetSync::Resolution FleetSync::Poll(const ValidKey& key) {
  return Ask(key, /*first=*/false);
}

FleetSync::Resolution FleetSync::Ask(const ValidKey& key, bool first) {
  Resolution resolution;
  if (!Reachable()) return resolution;
  absl::StatusOr<std::optional<Record>> found = fleet_->Get(key.key());
  if (!Succeeded(found.status(), "reading a record")) return resolution;
  if (Answers(*found)) {
    fetched_.fetch_add(1, std::memory_order_relaxed);
    resolution.outcome = Outcome::kFound;
    resolution.record = *std::move(found);
    return resolution;
  }
  return ClaimOrWait(key, first);
}

FleetSync::Resolution FleetSync::ClaimOrWait(const ValidKey& key, bool first) {
  Resolution resolution;
  absl::StatusOr<FleetClaim> claim =
      fleet_->TryClaim(key.key(), options_.holder, options_.lease);
  if (!Succeeded(claim.status(), "claiming a key")) return resolution;
  if (!claim->claimed) {
    if (first) waits_.fetch_add(1, std::memory_order_relaxed);
    resolution.outcome = Outcome::kHeld;
    return resolution;
  }
  // Between our read and the claim another host may have published and
  // released the key (one transaction, but our read came before it): read
  // once more under the lease.
  absl::StatusOr<std::optional<Record>> found = fleet_->Get(key.key());
  if (Succeeded(found.status(), "reading a record") && Answers(*found)) {
    fleet_->Release(key.text(), options_.holder).IgnoreError();
    fetched_.fetch_add(1, std::memory_order_relaxed);
    resolution.outcome = Outcome::kFound;
    resolution.record = *std::move(found);
    return resolution;
  }
  claims_.fetch_add(1, std::memory_order_relaxed);
  {
    absl::MutexLock lock(&mu_);
    held_.insert(key.text());
  }
  resolution.outcome = Outcome::kClaimed;
  return resolution;
}

void FleetSync::Wake() {
  {
    absl::MutexLock lock(&mu_);
    wake_ = true;
  }
  cv_.SignalAll();
}

void FleetSync::SearchFailed(const ValidKey& key) {
  {
    absl::MutexLock lock(&mu_);
    if (held_.erase(key.text()) == 0) return;
  }
  Succeeded(fleet_->Release(key.text(), options_.holder), "releasing a lease");
}

absl::Status FleetSync::DrainOnce() {
  while (true) {
    int64_t dropped = 0;
    absl::StatusOr<std::vector<OutboxEntry>> entries =
        store_->ReadOutbox(options_.publish_batch, &dropped);
    if (dropped > 0) {
      spdlog::error("fleet outbox: dropped {} entries that cannot be read",
                    dropped);
    }
    if (!entries.ok()) return entries.status();
    if (entries->empty()) return absl::OkStatus();
    std::vector<Record> records;
    std::vector<int64_t> ids;
    for (OutboxEntry& entry : *entries) {
      ids.push_back(entry.id);
      records.push_back(std::move(entry.record));
    }
    absl::Status published = fleet_->Publish(records, options_.holder);
    if (!Succeeded(published, "publishing the outbox")) return published;
    published_.fetch_add(static_cast<int64_t>(records.size()),
                         std::memory_order_relaxed);
    {
      absl::MutexLock lock(&mu_);
      for (const Record& r : records) held_.erase(r.key.ToText());
    }
    // Published but not removed (the local write failed): published again
    // later, which the fleet takes as the same measurement.
    absl::Status removed = store_->RemoveFromOutbox(ids);
    if (!removed.ok()) {
      spdlog::warn("fleet outbox: removing published entries failed: {}",
                   removed.ToString());
      return removed;
    }
    if (static_cast<int>(records.size()) < options_.publish_batch) {
      return absl::OkStatus();
    }
  }
}

void FleetSync::WaitForSignal(absl::Duration timeout, bool or_wake) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!stop_ && !(or_wake && wake_)) {
    if (cv_.WaitWithDeadline(&mu_, deadline)) return;  // timed out
  }
}

void FleetSync::DrainLoop() {
  absl::Duration wait = absl::ZeroDuration();
  bool ok = true;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (ok) {
        // Nothing new: look again now and then (an outbox left by an
        // earlier run, a write this daemon did not wake us for).
        WaitForSignal(wait, /*or_wake=*/true);
      } else {
        // After a failure only the retry interval, whatever is stored
        // meanwhile: the outbox keeps it.
        WaitForSignal(options_.retry, /*or_wake=*/false);
      }
      if (stop_) return;
      wake_ = false;
    }
    ok = DrainOnce().ok();
    wait = absl::Seconds(1);
  }
}

void FleetSync::RenewLoop() {
  while (true) {
    std::vector<std::string> keys;
    {
      absl::MutexLock lock(&mu_);
      WaitForSignal(options_.lease / 3, /*or_wake=*/false);
      if (stop_) return;
      keys.assign(held_.begin(), held_.end());
    }
    if (!keys.empty()) {
      absl::StatusOr<int64_t> held =
          fleet_->Renew(keys, options_.holder, options_.lease);
      Succeeded(held.status(), "renewing leases");
    }
  }
}

FleetHealth FleetSync::Health() {
  FleetHealth h;
  h.enabled = true;
  h.database = fleet_->display();
  h.connected = connected_.load();
  {
    absl::MutexLock lock(&mu_);
    h.last_error = last_error_;
    h.last_error_us = last_error_us_;
  }
  absl::StatusOr<int64_t> outbox = store_->OutboxSize();
  h.outbox = outbox.ok() ? *outbox : -1;
  h.published = published_.load();
  h.fetched = fetched_.load();
  h.claims = claims_.load();
  h.waits = waits_.load();
  h.errors = errors_.load();
  h.jobs_done = jobs_done_.load();
  return h;
}

}  // namespace tunedb
