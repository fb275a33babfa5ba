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
  ++counts_[{id, std::string(program)}];
}

void ServedCounts::Stop() { flusher_.Stop(); }

void ServedCounts::Flush() {
  std::map<std::pair<int64_t, std::string>, int64_t> batch;
  {
    absl::MutexLock lock(&mu_);
    batch.swap(counts_);
  }
  if (batch.empty()) return;
  std::vector<ServedCount> counts;
  counts.reserve(batch.size());
  for (auto& [id_program, count] : batch) {
    counts.emplace_back(id_program.first, count, id_program.second);
  }
  absl::Status s = store_->AddServed(counts);
  if (!s.ok()) spdlog::warn("flushing served counts failed: {}", s.ToString());
}

}  // namespace tunedb
