#include "server/tuning/program_keys.h"

#include <algorithm>

#include "absl/status/status.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"

namespace tunedb {
namespace {

// Memory one waiting key takes besides its strings: the map's slot and the
// strings' own headers, roughly.
constexpr int64_t kEntryOverheadBytes = 96;

// A batch (program -> (device, request) -> µs) as the store's rows.
template <class Batch>
std::vector<ProgramKey> RowsOf(const Batch& batch) {
  std::vector<ProgramKey> rows;
  for (const auto& [program, asked] : batch) {
    for (const auto& [key, us] : asked) {
      rows.push_back(ProgramKey{program, key.first, key.second, us});
    }
  }
  return rows;
}

}  // namespace

ProgramKeys::ProgramKeys(Store* store, Limits limits,
                         absl::Duration flush_interval)
    : store_(store),
      limits_(limits),
      flusher_(flush_interval, [this] { Flush(); }) {}

ProgramKeys::~ProgramKeys() { Stop(); }

void ProgramKeys::Remember(const std::string& program,
                           const std::string& device, std::string request,
                           absl::Time now) {
  const int64_t us = absl::ToUnixMicros(now);
  const int64_t size = static_cast<int64_t>(request.size());
  absl::MutexLock lock(&mu_);
  if (size > limits_.max_request_bytes) {
    ++counts_.not_remembered;
    return;
  }
  Asked& asked = pending_[program];
  auto [it, added] =
      asked.try_emplace(std::make_pair(device, std::move(request)), us);
  if (!added) {
    it->second = std::max(it->second, us);
    return;
  }
  const int64_t bytes = size + static_cast<int64_t>(device.size()) +
                        static_cast<int64_t>(program.size()) +
                        kEntryOverheadBytes;
  if (pending_bytes_ + bytes > limits_.max_pending_bytes) {
    asked.erase(it);
    if (asked.empty()) pending_.erase(program);
    ++counts_.not_remembered;
    return;
  }
  pending_bytes_ += bytes;
  ++counts_.remembered;
}

void ProgramKeys::Collect(const Batch& batch, const std::string& program,
                          const std::string& device,
                          absl::flat_hash_map<std::string, int64_t>* out) {
  auto found = batch.find(program);
  if (found == batch.end()) return;
  for (const auto& [key, us] : found->second) {
    if (key.first != device) continue;
    int64_t& kept = (*out)[key.second];
    kept = std::max(kept, us);
  }
}

absl::StatusOr<std::vector<std::string>> ProgramKeys::Recall(
    const std::string& program, const std::string& device, int64_t limit) {
  if (limit <= 0 || limit > limits_.max_keys_per_program) {
    limit = limits_.max_keys_per_program;
  }
  // Memory first, then the store: a batch leaves memory only once stored.
  absl::flat_hash_map<std::string, int64_t> asked;
  std::shared_ptr<const Batch> flushing;
  {
    absl::MutexLock lock(&mu_);
    Collect(pending_, program, device, &asked);
    flushing = flushing_;
  }
  if (flushing != nullptr) Collect(*flushing, program, device, &asked);
  ASSIGN_OR_RETURN(std::vector<ProgramKey> stored,
                   store_->ReadProgramKeys(program, device, limit));
  for (ProgramKey& key : stored) {
    int64_t& kept = asked[std::move(key.request)];
    kept = std::max(kept, key.last_asked_us);
  }
  std::vector<std::pair<int64_t, std::string>> newest;
  newest.reserve(asked.size());
  for (auto& [request, us] : asked) newest.emplace_back(us, request);
  std::sort(newest.begin(), newest.end(),
            [](const auto& a, const auto& b) { return a > b; });
  if (static_cast<int64_t>(newest.size()) > limit) newest.resize(limit);
  std::vector<std::string> out;
  out.reserve(newest.size());
  for (auto& [us, request] : newest) out.push_back(std::move(request));
  return out;
}

void ProgramKeys::Stop() { flusher_.Stop(); }

void ProgramKeys::CountWarm(int64_t keys) {
  absl::MutexLock lock(&mu_);
  ++counts_.warms;
  counts_.warm_keys += keys;
}

ProgramKeys::Counts ProgramKeys::counts() const {
  absl::MutexLock lock(&mu_);
  return counts_;
}

void ProgramKeys::Flush() {
  absl::MutexLock flush_lock(&flush_mu_);
  std::shared_ptr<const Batch> batch;
  {
    absl::MutexLock lock(&mu_);
    if (pending_.empty()) return;
    batch = std::make_shared<const Batch>(std::move(pending_));
    pending_ = Batch();
    pending_bytes_ = 0;
    flushing_ = batch;
  }
  Write(*batch);
  absl::MutexLock lock(&mu_);
  flushing_.reset();
}

void ProgramKeys::Write(const Batch& batch) {
  ReadTotalsOnce();
  absl::StatusOr<std::vector<ProgramTotals>> written =
      store_->PutProgramKeys(RowsOf(batch), limits_.max_keys_per_program);
  if (!written.ok()) {
    spdlog::warn("writing the keys programs asked failed: {}",
                 written.status().ToString());
    absl::MutexLock lock(&mu_);
    ++counts_.flush_failures;
    return;
  }
  if (!totals_read_) return;  // the bounds across programs wait for them
  for (ProgramTotals& totals : *written) {
    const std::string program = totals.program;
    totals_[program] = std::move(totals);
  }
  ForgetPastBounds();
}

void ProgramKeys::ReadTotalsOnce() {
  if (totals_read_) return;
  absl::StatusOr<std::vector<ProgramTotals>> all = store_->ProgramKeyTotals();
  if (!all.ok()) {
    spdlog::warn("reading the programs' keys kept failed: {}",
                 all.status().ToString());
    return;
  }
  for (ProgramTotals& totals : *all) {
    const std::string program = totals.program;
    totals_[program] = std::move(totals);
  }
  totals_read_ = true;
}

void ProgramKeys::ForgetPastBounds() {
  int64_t bytes = 0;
  for (const auto& [program, totals] : totals_) bytes += totals.bytes;
  int64_t programs = static_cast<int64_t>(totals_.size());
  if (programs <= limits_.max_programs && bytes <= limits_.max_stored_bytes) {
    return;
  }
  std::vector<const ProgramTotals*> oldest;
  for (const auto& [program, totals] : totals_) oldest.push_back(&totals);
  std::sort(oldest.begin(), oldest.end(), [](const auto* a, const auto* b) {
    return a->last_asked_us < b->last_asked_us;
  });
  std::vector<std::string> forget;
  for (const ProgramTotals* totals : oldest) {
    if (programs <= limits_.max_programs &&
        bytes <= limits_.max_stored_bytes) {
      break;
    }
    forget.push_back(totals->program);
    bytes -= totals->bytes;
    --programs;
  }
  if (absl::Status s = store_->ForgetPrograms(forget); !s.ok()) {
    spdlog::warn("forgetting {} programs' keys failed: {}", forget.size(),
                 s.ToString());
    return;
  }
  spdlog::info("forgot the keys of {} programs that asked least recently",
               forget.size());
  for (const std::string& program : forget) totals_.erase(program);
  absl::MutexLock lock(&mu_);
  counts_.programs_forgotten += static_cast<int64_t>(forget.size());
}

}  // namespace tunedb
