#include "client/database_fallback.h"

#include <utility>

#include "absl/status/statusor.h"
#include "client/answer_cache.h"

namespace tunedb {

DatabaseFallback::DatabaseFallback(std::string db_path)
    : db_path_(std::move(db_path)) {}

DatabaseFallback::~DatabaseFallback() = default;

void DatabaseFallback::MaybeOpen() {
  if (!waiting()) return;
  const int64_t now = CoarseNowMs();
  if (now < retry_ms_) return;
  retry_ms_ = now + kRetryMs;
  Store::Options o;
  o.path = db_path_;
  o.read_only = true;
  o.read_connections = 2;
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(o);
  if (!store.ok()) return;
  store_ = *std::move(store);
  database_.store(store_.get(), std::memory_order_release);
}

std::optional<DatabaseFallback::Choice> DatabaseFallback::Find(
    const ProblemKey& key, const Constraints& constraints) const {
  Store* db = database_.load(std::memory_order_acquire);
  if (db == nullptr) return std::nullopt;
  absl::StatusOr<std::optional<Record>> record = db->Get(key);
  if (!record.ok() || !record->has_value()) return std::nullopt;
  std::optional<AlgoResult> choice = Choose(**record, constraints);
  if (!choice.has_value()) return std::nullopt;
  return Choice{*std::move(choice), (*record)->measured_at_us};
}

}  // namespace tunedb
