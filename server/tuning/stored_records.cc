#include "server/tuning/stored_records.h"

#include <string>
#include <utility>

#include "common/status_macros.h"
#include "server/tuning/version_predictor.h"
#include "spdlog/spdlog.h"

namespace tunedb {

StoredRecords::StoredRecords(Store* store, size_t cache_capacity,
                             absl::Duration family_ttl)
    : store_(store),
      cache_(cache_capacity),
      families_(store, family_ttl, /*max_records=*/65536) {}

void StoredRecords::NoteWrite() {
  last_write_us_.store(absl::ToUnixMicros(absl::Now()),
                       std::memory_order_relaxed);
}

absl::StatusOr<std::shared_ptr<const Record>> StoredRecords::Get(
    const ValidKey& key) {
  RecordCache::Entry cached = cache_.Find(key.text());
  if (cached.known) return cached.record;  // the record, or known absent
  const uint64_t read_at = cache_.generation();
  absl::StatusOr<std::optional<Record>> record = store_->Get(key.key());
  if (absl::IsDataLoss(record.status())) {
    // A damaged row is a miss: Tune searches again and its Put replaces the
    // row; `tunedb repair` quarantines what is left.
    spdlog::warn("{}; answered as a miss",
                 std::string(record.status().message()));
    return nullptr;
  }
  RETURN_IF_ERROR(record.status());
  std::shared_ptr<const Record> shared;
  if (*record) shared = std::make_shared<const Record>(std::move(**record));
  cache_.PutRead(key.text(), shared, read_at);
  return shared;
}

absl::StatusOr<std::vector<Record>> StoredRecords::OtherVersions(
    const ValidKey& key, bool with_plans) {
  std::vector<Record> others;
  RecordFilter filter = OtherVersionsFilter(key.key());
  filter.without_plans = !with_plans;
  RETURN_IF_ERROR(store_->Query(filter, 0, kOtherVersionsRead,
                                [&](const Record& r) {
                                  others.push_back(r);
                                  return true;
                                }));
  return others;
}

absl::StatusOr<std::shared_ptr<const Record>> StoredRecords::PutSearched(
    const ValidKey& key, Record record, bool for_fleet) {
  ASSIGN_OR_RETURN(record.id, for_fleet ? store_->PutForFleet(record)
                                        : store_->Put(record));
  NoteWrite();
  auto stored = std::make_shared<const Record>(std::move(record));
  cache_.Put(key.text(), stored);
  families_.Forget(key.key());
  return stored;
}

absl::StatusOr<std::shared_ptr<const Record>> StoredRecords::Keep(
    Record record) {
  ASSIGN_OR_RETURN(const ValidKey key, ValidKey::Make(record.key));
  record.served_count = 0;
  ASSIGN_OR_RETURN(record.id, store_->Put(record));
  NoteWrite();
  auto stored = std::make_shared<const Record>(std::move(record));
  cache_.Put(key.text(), stored);
  families_.Forget(key.key());
  return stored;
}

std::shared_ptr<const Record> StoredRecords::KeepFleetRecord(Record record) {
  absl::StatusOr<std::shared_ptr<const Record>> kept = Keep(record);
  if (kept.ok()) return *std::move(kept);
  // Served all the same; the next miss asks the fleet again.
  spdlog::warn("storing a fleet record locally failed: {}",
               kept.status().ToString());
  record.served_count = 0;
  return std::make_shared<const Record>(std::move(record));
}

absl::StatusOr<int64_t> StoredRecords::Invalidate(const RecordFilter& filter) {
  absl::StatusOr<int64_t> deleted = store_->Delete(filter);
  if (deleted.ok()) NoteWrite();
  cache_.Clear();
  families_.Clear();
  return deleted;
}

absl::StatusOr<int64_t> StoredRecords::CommitImport(
    Store::StagedImport& import, const ImportTag& tag) {
  absl::StatusOr<int64_t> stored = import.Commit(tag);
  if (stored.ok()) NoteWrite();
  cache_.Clear();
  families_.Clear();
  return stored;
}

}  // namespace tunedb
