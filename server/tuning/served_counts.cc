#include "server/tuning/served_counts.h"

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "spdlog/spdlog.h"

namespace tunedb {

ServedCounts::ServedCounts(Store* store, absl::Duration flush_interval)
    : store_(store), flusher_(flush_interval, [this] { Flush(); }) {}

ServedCounts::~ServedCounts() { Stop(); }

void ServedCounts::Count(int64_t id, absl::string_view program) {
  absl::MutexLock lock(&mu_);
  auto it = counts_.find(program);  // no copy of a program already counted
  if (it == counts_.end()) it = counts_.try_emplace(std::string(program)).first;
  ++it->second[id];
}

void ServedCounts::Stop() { flusher_.Stop(); }

void ServedCounts::Flush() {
  decltype(counts_) batch;
  {
    absl::MutexLock lock(&mu_);
    batch.swap(counts_);
  }
  if (batch.empty()) return;
  std::vector<ServedCount> counts;
  for (const auto& [program, ids] : batch) {
    for (const auto& [id, count] : ids) counts.emplace_back(id, count, program);
  }
  absl::Status s = store_->AddServed(counts);
  if (!s.ok()) spdlog::warn("flushing served counts failed: {}", s.ToString());
}

}  // namespace tunedb
