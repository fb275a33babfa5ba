// StoredRecords: the core's one way to the records of its store. Reads go
// through the record cache (memory first, then the store); every write the
// core makes (a search's record, a record kept from the fleet, an import,
// a delete) goes through here, which keeps the record cache and the family
// cache (FamilyCache, for predictions) in step with the store and notes when
// the store was last written.
//
// Thread safety: thread-safe.
#ifndef TUNEDB_SERVER_TUNING_STORED_RECORDS_H_
#define TUNEDB_SERVER_TUNING_STORED_RECORDS_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/valid_key.h"
#include "server/tuning/family_cache.h"
#include "server/tuning/record_cache.h"
#include "store/store.h"
#include "tunedb/record.h"

namespace tunedb {

class StoredRecords {
 public:
  // `store` must outlive this. `cache_capacity`: records kept in memory (0:
  // none); `family_ttl`: how long a family read for a prediction is reused.
  StoredRecords(Store* store, size_t cache_capacity, absl::Duration family_ttl);

  Store& store() { return *store_; }
  FamilyCache& families() { return families_; }

  // The stored record for `key` (memory first, then the store), or nullptr;
  // that none is stored is kept in memory too, until the next write;
  // also nullptr (logged) when its row cannot be read.
  absl::StatusOr<std::shared_ptr<const Record>> Get(const ValidKey& key);

  // `key`'s problem on its GPU model under other cuDNN versions (at most
  // kOtherVersionsRead records), with or without their plans.
  static constexpr int kOtherVersionsRead = 16;
  absl::StatusOr<std::vector<Record>> OtherVersions(const ValidKey& key,
                                                    bool with_plans);

  // Stores a search's `record` of `key` (with its fleet outbox entry where
  // `for_fleet`) and caches it; the record as stored.
  absl::StatusOr<std::shared_ptr<const Record>> PutSearched(
      const ValidKey& key, Record record, bool for_fleet);
  // Stores `record`, another host's measurement, as it is and not in the
  // fleet outbox, and has the caches of its key and family forget them.
  absl::StatusOr<std::shared_ptr<const Record>> Keep(Record record);
  // Keep for a record the fleet answered with: where it cannot be stored
  // (logged), it is served all the same.
  std::shared_ptr<const Record> KeepFleetRecord(Record record);

  // Deletes matching records (store and memory); returns how many.
  absl::StatusOr<int64_t> Invalidate(const RecordFilter& filter);
  // Commits `import` and drops the cached records it may have replaced.
  absl::StatusOr<int64_t> CommitImport(Store::StagedImport& import,
                                       const ImportTag& tag);

  // When a record was last written here (Unix µs); 0: not yet.
  int64_t last_write_us() const { return last_write_us_.load(); }

 private:
  void NoteWrite();

  Store* const store_;
  RecordCache cache_;
  FamilyCache families_;
  std::atomic<int64_t> last_write_us_{0};
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_STORED_RECORDS_H_
