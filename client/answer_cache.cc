#include "client/answer_cache.h"

#include <time.h>

#include <algorithm>
#include <chrono>

namespace tunedb {

int64_t CoarseNowMs() {
#if defined(CLOCK_MONOTONIC_COARSE)
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
#else
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
#endif
}

AnswerCache::AnswerCache(int64_t capacity) {
  ways_ = static_cast<int>(
      std::min<int64_t>(kMaxWays, std::max<int64_t>(1, capacity)));
  sets_ = std::max<int64_t>(1, capacity / ways_);
  const int64_t slots = sets_ * kMaxWays;
  tags_.reset(new TagLine[sets_]());
  slots_.reset(new Slot[slots]());
  refs_.reset(new std::atomic<uint8_t>[slots]());
  claims_.reset(new std::atomic<uint64_t>[slots]());
  measured_at_.reset(new int64_t[slots]());
  hands_.reset(new uint8_t[sets_]());
  stripes_.reset(new absl::Mutex[kStripes]);
}

AnswerCache::~AnswerCache() = default;

int AnswerCache::FindWay(int64_t set, const PackedKey& key,
                         uint64_t tag) const {
  for (int way = 0; way < ways_; ++way) {
    if (tags_[set].tag[way].load(std::memory_order_relaxed) != tag) continue;
    const Slot& slot = slots_[set * kMaxWays + way];
    bool equal = true;
    for (int i = 0; i < PackedKey::kWords; ++i) {
      equal &= slot.key[i].load(std::memory_order_relaxed) == key.w[i];
    }
    if (equal) return way;
  }
  return -1;
}

void AnswerCache::WriteSlot(int64_t index, const PackedKey& key,
                            const CacheValue& v) {
  Slot& slot = slots_[index];
  const uint64_t s = slot.seq.load(std::memory_order_relaxed);
  slot.seq.store(s + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  for (int i = 0; i < PackedKey::kWords; ++i) {
    slot.key[i].store(key.w[i], std::memory_order_relaxed);
  }
  slot.value[0].store(
      static_cast<uint64_t>(v.kind) | static_cast<uint64_t>(v.math_type) << 8 |
          static_cast<uint64_t>(static_cast<uint32_t>(v.algo)) << 32,
      std::memory_order_relaxed);
  slot.value[1].store(static_cast<uint64_t>(v.workspace_bytes),
                      std::memory_order_relaxed);
  slot.value[2].store(static_cast<uint64_t>(v.deadline_ms),
                      std::memory_order_relaxed);
  slot.seq.store(s + 2, std::memory_order_release);
}

bool AnswerCache::Insert(const PackedKey& key, uint64_t hash,
                         const CacheValue& value, int64_t measured_at_us,
                         bool keep_tuned) {
  const uint64_t tag = hash | 1;
  const int64_t set = SetOf(hash);
  absl::MutexLock lock(&StripeOf(set));
  std::atomic<uint64_t>* tags = tags_[set].tag;
  int way = FindWay(set, key, tag);
  const bool fresh = way < 0;
  if (!fresh && keep_tuned &&
      (slots_[set * kMaxWays + way].value[0].load(std::memory_order_relaxed) &
       0xff) == CacheValue::kTuned) {
    return false;
  }
  bool evicted = false;
  if (way < 0) {
    // An empty way, else an expired non-tuned one, else CLOCK.
    const int64_t now = CoarseNowMs();
    for (int w = 0; w < ways_ && way < 0; ++w) {
      if (tags[w].load(std::memory_order_relaxed) == 0) way = w;
    }
    for (int w = 0; w < ways_ && way < 0; ++w) {
      const Slot& slot = slots_[set * kMaxWays + w];
      const uint64_t v0 = slot.value[0].load(std::memory_order_relaxed);
      const auto deadline =
          static_cast<int64_t>(slot.value[2].load(std::memory_order_relaxed));
      if ((v0 & 0xff) != CacheValue::kTuned && now >= deadline) way = w;
    }
    if (way < 0) {
      evicted = true;
      uint8_t& hand = hands_[set];
      for (int step = 0; step < 2 * ways_; ++step) {
        const int w = hand;
        hand = static_cast<uint8_t>((hand + 1) % ways_);
        std::atomic<uint8_t>& ref = refs_[set * kMaxWays + w];
        if (ref.load(std::memory_order_relaxed) == 0) {
          way = w;
          break;
        }
        ref.store(0, std::memory_order_relaxed);
      }
      if (way < 0) way = hand;  // unreachable: the second sweep finds one
    }
    if (evicted) {
      evictions_.fetch_add(1, std::memory_order_relaxed);
    } else if (tags[way].load(std::memory_order_relaxed) == 0) {
      size_.fetch_add(1, std::memory_order_relaxed);
    }
    // Hide the old tag first so no reader matches the way half-written.
    tags[way].store(0, std::memory_order_relaxed);
  }
  const int64_t index = set * kMaxWays + way;
  WriteSlot(index, key, value);
  measured_at_[index] = measured_at_us;
  // A new entry starts unreferenced: it is the first to go unless it is hit
  // before the next sweep (so a scan of one-off keys cannot flush hot ones).
  if (fresh) refs_[index].store(0, std::memory_order_relaxed);
  tags[way].store(tag, std::memory_order_release);
  return true;
}

std::optional<int64_t> AnswerCache::MeasuredAt(const PackedKey& key,
                                               uint64_t hash) {
  const int64_t set = SetOf(hash);
  absl::MutexLock lock(&StripeOf(set));
  const int way = FindWay(set, key, hash | 1);
  if (way < 0) return std::nullopt;
  return measured_at_[set * kMaxWays + way];
}

void AnswerCache::Clear() {
  const PackedKey zero{};
  for (int64_t set = 0; set < sets_; ++set) {
    absl::MutexLock lock(&StripeOf(set));
    for (int way = 0; way < ways_; ++way) {
      std::atomic<uint64_t>& tag = tags_[set].tag[way];
      if (tag.load(std::memory_order_relaxed) == 0) continue;
      tag.store(0, std::memory_order_relaxed);
      WriteSlot(set * kMaxWays + way, zero, CacheValue{});
      size_.fetch_sub(1, std::memory_order_relaxed);
    }
  }
}

}  // namespace tunedb
