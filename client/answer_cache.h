// AnswerCache: the client's in-process cache from PackedKey to the answer,
// built so that a hit takes no lock and writes no shared memory.
//
// It is set-associative: a key's hash picks a set of up to 8 ways; a set
// holds a line of 8 hash tags and 8 slots. Each slot is guarded by its own
// sequence lock (odd while a writer changes it): a reader matches the tag,
// reads the slot's words and re-checks the sequence, retrying if a writer
// intervened. Writers (inserts, which are rare: misses and background
// answers) serialize on one of 64 striped mutexes. The total number of
// entries never exceeds the capacity; a full set evicts a way not used since
// the last sweep (CLOCK over per-way "referenced" flags that a hit sets only
// when clear, so steady hits write nothing; new entries start unreferenced).
//
// Entries carry a deadline on a coarse monotonic millisecond clock: for
// heuristic and "none" entries it is when they expire (a negative answer
// with a short lifetime); for tuned entries it is when a hit should also
// ask for a re-check (claimed once per slot version, so one hit asks).
//
// Thread safety: every method is thread-safe. Lookup takes no lock; it only
// retries (a bounded number of times, then reports a miss) while a writer
// is changing the slot it reads.
#ifndef TUNEDB_CLIENT_ANSWER_CACHE_H_
#define TUNEDB_CLIENT_ANSWER_CACHE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

#include "absl/synchronization/mutex.h"
#include "client/packed_key.h"
#include "tunedb/record.h"

namespace tunedb {

// A coarse monotonic clock in milliseconds (a few ms resolution, a few ns
// per read).
int64_t CoarseNowMs();

struct CacheValue {
  // kPredicted: a prediction for a key never tuned (provisional, as
  // kHeuristic: it expires, and never replaces a tuned entry).
  enum Kind : uint8_t {
    kEmpty = 0,
    kTuned = 1,
    kHeuristic = 2,
    kNone = 3,
    kPredicted = 4
  };
  Kind kind = kEmpty;
  int32_t algo = -1;
  MathType math_type = MathType::kDefault;
  int64_t workspace_bytes = 0;
  // kTuned: re-check after (INT64_MAX: never); others: expires at.
  int64_t deadline_ms = 0;
};

class AnswerCache {
 public:
  static constexpr int kMaxWays = 8;

  // Holds at most `capacity` entries (> 0).
  explicit AnswerCache(int64_t capacity);
  ~AnswerCache();

  int64_t capacity() const { return sets_ * ways_; }

  // On a live entry for `key` fills `*value` and returns true. An expired
  // non-tuned entry is a miss. For a tuned entry past its deadline, sets
  // `*refresh` for exactly one caller per entry version.
  TUNEDB_ALWAYS_INLINE bool Lookup(const PackedKey& key, uint64_t hash,
                                   int64_t now_ms, CacheValue* value,
                                   bool* refresh) const {
    const uint64_t tag = hash | 1;
    const int64_t set = SetOf(hash);
    const std::atomic<uint64_t>* tags = tags_[set].tag;
    for (int way = 0; way < ways_; ++way) {
      if (tags[way].load(std::memory_order_relaxed) != tag) continue;
      const int64_t index = set * kMaxWays + way;
      const Slot& slot = slots_[index];
      for (int attempt = 0; attempt < 8; ++attempt) {
        const uint64_t s1 = slot.seq.load(std::memory_order_acquire);
        if (s1 & 1) continue;
        uint64_t diff = 0;
#pragma GCC unroll 12
        for (int i = 0; i < PackedKey::kWords; ++i) {
          diff |= slot.key[i].load(std::memory_order_relaxed) ^ key.w[i];
        }
        const uint64_t v0 = slot.value[0].load(std::memory_order_relaxed);
        const uint64_t v1 = slot.value[1].load(std::memory_order_relaxed);
        const uint64_t v2 = slot.value[2].load(std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_acquire);
        if (slot.seq.load(std::memory_order_relaxed) != s1) continue;
        if (diff != 0) break;  // another key with the same tag
        const auto kind = static_cast<CacheValue::Kind>(v0 & 0xff);
        const auto deadline = static_cast<int64_t>(v2);
        if (kind == CacheValue::kEmpty) break;
        if (kind != CacheValue::kTuned && now_ms >= deadline) return false;
        value->kind = kind;
        value->math_type = static_cast<MathType>((v0 >> 8) & 0xff);
        value->algo = static_cast<int32_t>(v0 >> 32);
        value->workspace_bytes = static_cast<int64_t>(v1);
        value->deadline_ms = deadline;
        if (refs_[index].load(std::memory_order_relaxed) == 0) {
          refs_[index].store(1, std::memory_order_relaxed);
        }
        if (kind == CacheValue::kTuned && now_ms >= deadline) {
          uint64_t claimed = claims_[index].load(std::memory_order_relaxed);
          *refresh = claimed != s1 &&
                     claims_[index].compare_exchange_strong(claimed, s1);
        }
        return true;
      }
      return false;
    }
    return false;
  }

  // Adds or replaces the entry for `key`. `measured_at_us` is remembered
  // for MeasuredAt (0 for non-tuned entries). With `keep_tuned`, a tuned
  // entry already there stays (a provisional answer computed before a
  // background answer arrived must not replace it); returns false then.
  bool Insert(const PackedKey& key, uint64_t hash, const CacheValue& value,
              int64_t measured_at_us, bool keep_tuned = false);

  // measured_at_us of the entry for `key`, if present.
  std::optional<int64_t> MeasuredAt(const PackedKey& key, uint64_t hash);

  // Removes every entry.
  void Clear();

  int64_t size() const { return size_.load(std::memory_order_relaxed); }
  int64_t evictions() const {
    return evictions_.load(std::memory_order_relaxed);
  }

 private:
  struct alignas(64) TagLine {
    std::atomic<uint64_t> tag[kMaxWays] = {};  // hash | 1; 0 = empty way
  };
  struct alignas(64) Slot {
    std::atomic<uint64_t> seq{0};
    std::atomic<uint64_t> key[PackedKey::kWords] = {};
    // [0] kind | math << 8 | algo << 32; [1] workspace; [2] deadline.
    std::atomic<uint64_t> value[3] = {};
  };

  int64_t SetOf(uint64_t hash) const {
    return static_cast<int64_t>(
        (static_cast<unsigned __int128>(hash >> 32) * sets_) >> 32);
  }
  // The way holding `key` in `set`, or -1. Caller holds the set's stripe.
  int FindWay(int64_t set, const PackedKey& key, uint64_t tag) const;
  void WriteSlot(int64_t index, const PackedKey& key, const CacheValue& v);
  absl::Mutex& StripeOf(int64_t set) const {
    return stripes_[set % kStripes];
  }

  static constexpr int kStripes = 64;

  int64_t sets_ = 0;
  int ways_ = 0;
  std::unique_ptr<TagLine[]> tags_;  // sets_
  std::unique_ptr<Slot[]> slots_;    // sets_ * kMaxWays
  mutable std::unique_ptr<std::atomic<uint8_t>[]> refs_;
  mutable std::unique_ptr<std::atomic<uint64_t>[]> claims_;
  // Guarded by the set's stripe (StripeOf(set)): a lock per set index,
  // which ABSL_GUARDED_BY cannot name, so these carry no annotation.
  std::unique_ptr<int64_t[]> measured_at_;
  std::unique_ptr<uint8_t[]> hands_;
  mutable std::unique_ptr<absl::Mutex[]> stripes_;
  std::atomic<int64_t> size_{0};
  std::atomic<int64_t> evictions_{0};
};

}  // namespace tunedb

#endif  // TUNEDB_CLIENT_ANSWER_CACHE_H_
