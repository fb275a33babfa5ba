// RecordCache: the daemon's in-memory read-through cache of stored records,
// keyed by canonical key text, so a Lookup of a hot key costs neither a
// SQLite read nor a key re-parse. Bounded; least recently used entries go
// first. Whoever writes the store updates or clears the cache (TuningCore).
//
// Thread safety: thread-safe (one mutex; the critical sections are a hash
// lookup and a list splice).
#ifndef TUNEDB_SERVER_TUNING_RECORD_CACHE_H_
#define TUNEDB_SERVER_TUNING_RECORD_CACHE_H_

#include <cstddef>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "tunedb/record.h"

namespace tunedb {

class RecordCache {
 public:
  // `capacity` records at most; 0 disables the cache.
  explicit RecordCache(size_t capacity) : capacity_(capacity) {}

  // The cached record for `key_text`, or nullptr.
  std::shared_ptr<const Record> Get(const std::string& key_text);

  // Inserts or replaces the record for `key_text`.
  void Put(const std::string& key_text, std::shared_ptr<const Record> record);

  // Drops everything (after deletes or imports).
  void Clear();

  size_t size() const;

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const Record>>;
  const size_t capacity_;
  mutable absl::Mutex mu_;
  std::list<Entry> lru_ ABSL_GUARDED_BY(mu_);  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_RECORD_CACHE_H_
