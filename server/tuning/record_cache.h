// RecordCache: the daemon's in-memory read-through cache of stored records,
// keyed by canonical key text, so a Lookup of a hot key costs neither a
// SQLite read nor a key re-parse. It also keeps that the store had no
// record for a key (a miss read once is not read again until the store is
// written). Bounded; least recently used entries go first, known absences
// and records alike. Whoever writes the store updates or clears the cache
// (StoredRecords); a read's result is kept only if nothing was written to
// the cache since the read began (PutRead), so a read that raced a write
// never hides the written record.
//
// Thread safety: thread-safe (one mutex; the critical sections are a hash
// lookup and a list splice).
#ifndef TUNEDB_SERVER_TUNING_RECORD_CACHE_H_
#define TUNEDB_SERVER_TUNING_RECORD_CACHE_H_

#include <cstddef>
#include <cstdint>
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

  // What the cache knows of a key: nothing (`known` false), its record, or
  // (`known` with a null `record`) that the store had none.
  struct Entry {
    bool known = false;
    std::shared_ptr<const Record> record;
  };
  Entry Find(const std::string& key_text);

  // The cached record for `key_text`, or nullptr (not cached, or known
  // absent).
  std::shared_ptr<const Record> Get(const std::string& key_text) {
    return Find(key_text).record;
  }

  // Moves on with every write (Put, Clear). Read it before reading the
  // store, and hand it to PutRead with what the read found.
  uint64_t generation() const;

  // A write: inserts or replaces the record for `key_text`.
  void Put(const std::string& key_text, std::shared_ptr<const Record> record);

  // What a store read begun at `read_at` (generation()) found for
  // `key_text`: its record, or nullptr where none is stored. Kept only if
  // nothing was written since `read_at`.
  void PutRead(const std::string& key_text,
               std::shared_ptr<const Record> record, uint64_t read_at);

  // Drops everything (after deletes or imports).
  void Clear();

  size_t size() const;

 private:
  // A key's text and its record (nullptr: known absent).
  using Slot = std::pair<std::string, std::shared_ptr<const Record>>;
  void Insert(const std::string& key_text,
              std::shared_ptr<const Record> record)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t capacity_;
  mutable absl::Mutex mu_;
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  std::list<Slot> lru_ ABSL_GUARDED_BY(mu_);  // most recently used first
  std::unordered_map<std::string, std::list<Slot>::iterator> index_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_RECORD_CACHE_H_
