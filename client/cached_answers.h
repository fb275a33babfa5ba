// CachedAnswers: the client's in-process answers (an AnswerCache over
// PackedKeys, with the DeviceTable that interns their devices), and the
// rules for what an entry lives for: a tuned entry is re-checked after
// ClientOptions::refresh_interval, a provisional one (heuristic, predicted
// or none) expires after negative_ttl and never replaces a tuned one.
// Without a cache (cache_capacity 0) it holds nothing and every lookup
// misses.
//
// Thread safety: every method is thread-safe; Lookup takes no lock.
#ifndef TUNEDB_CLIENT_CACHED_ANSWERS_H_
#define TUNEDB_CLIENT_CACHED_ANSWERS_H_

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/time/time.h"
#include "client/answer_cache.h"
#include "client/packed_key.h"
#include "tunedb/client_options.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

// Where a key's answer is cached: `packed` and `hash` are meaningful only
// when `packable` (left uninitialized otherwise, as PackedKey is).
struct CacheSlot {
  bool packable = false;
  PackedKey packed;
  uint64_t hash = 0;
};

class CachedAnswers {
 public:
  explicit CachedAnswers(const ClientOptions& options);

  // On a live entry for `key` under `c` fills `*value` (and `*refresh`, as
  // AnswerCache::Lookup) and returns true. Else false, with `*slot` the
  // key's slot where its device is already known and it packs (else not
  // packable: MakeSlot interns the device).
  TUNEDB_ALWAYS_INLINE bool Lookup(const ProblemKey& key,
                                   const Constraints& c, CacheSlot* slot,
                                   CacheValue* value, bool* refresh) const {
    if (cache_ == nullptr) return false;
    const int device = devices_.Find(key.device);
    if (device == 0 || !PackKey(device, key.problem, c, &slot->packed)) {
      return false;
    }
    slot->packable = true;
    slot->hash = slot->packed.Hash();
    return cache_->Lookup(slot->packed, slot->hash, CoarseNowMs(), value,
                          refresh);
  }

  // The slot of a key on the slow path: interns its device first.
  CacheSlot MakeSlot(const ProblemKey& key, const Constraints& c);

  // Caches a tuned `choice` (measured at `measured_at_us`), re-checked
  // after refresh_interval (never with a zero interval).
  void PutTuned(const CacheSlot& slot, const AlgoResult& choice,
                int64_t measured_at_us);
  // Caches a provisional answer of `kind` (kHeuristic, kPredicted: its
  // `choice`; kNone: no choice) for negative_ttl, unless a tuned one is
  // there.
  void PutProvisional(const CacheSlot& slot, CacheValue::Kind kind,
                      const AlgoResult& choice);
  // Gives a live tuned entry a fresh re-check deadline.
  void RearmRefresh(const CacheSlot& slot);
  // measured_at_us of the slot's entry, if there is one.
  std::optional<int64_t> MeasuredAt(const CacheSlot& slot);

  void Clear();
  int64_t evictions() const;
  int64_t size() const;

 private:
  const absl::Duration refresh_interval_;
  const absl::Duration negative_ttl_;
  std::unique_ptr<AnswerCache> cache_;  // null without a cache
  DeviceTable devices_;
};

}  // namespace tunedb

#endif  // TUNEDB_CLIENT_CACHED_ANSWERS_H_
