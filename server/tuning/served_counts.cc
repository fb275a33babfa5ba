#include "server/tuning/served_counts.h"

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "spdlog/spdlog.h"

namespace tunedb {

ServedCounts::ServedCounts(Store* store, absl::Duration flush_interval)
    : store_(store), flusher_(flush_interval, [this] { Flush(); }) {}

ServedCounts::~ServedCounts() { Stop(); }

void ServedCounts::Count(int64_t id) {
  absl::MutexLock lock(&mu_);
  ++counts_[id];
}

void ServedCounts::Stop() { flusher_.Stop(); }

void ServedCounts::Flush() {
  std::map<int64_t, int64_t> batch;
  {
    absl::MutexLock lock(&mu_);
    batch.swap(counts_);
  }
  if (batch.empty()) return;
  std::vector<std::pair<int64_t, int64_t>> counts(batch.begin(), batch.end());
  absl::Status s = store_->AddServed(counts);
  if (!s.ok()) spdlog::warn("flushing served counts failed: {}", s.ToString());
}

}  // namespace tunedb
