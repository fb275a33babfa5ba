// StripedCounters: N event counters that many threads bump without sharing
// a cache line or taking a locked instruction, summed on read.
//
// The first kOwnedStripes threads of the process each own one
// cache-line-aligned stripe and bump it with a plain load and store (no
// other thread writes it). Later threads share one overflow stripe that
// they bump with atomic adds, which stays correct but contends.
//
// Thread safety: Add and Sum are thread-safe; Sum may miss increments made
// concurrently with it.
#ifndef TUNEDB_CLIENT_STRIPED_COUNTERS_H_
#define TUNEDB_CLIENT_STRIPED_COUNTERS_H_

#include <atomic>
#include <cstdint>

namespace tunedb {

inline constexpr int kOwnedStripes = 64;

inline std::atomic<int> next_counter_stripe{0};

// This thread's stripe: 0 .. kOwnedStripes-1 if it owns one, else
// kOwnedStripes (the shared overflow stripe).
inline int ThisThreadStripe() {
  static thread_local int stripe = -1;
  if (stripe < 0) {
    const int id = next_counter_stripe.fetch_add(1, std::memory_order_relaxed);
    stripe = id < kOwnedStripes ? id : kOwnedStripes;
  }
  return stripe;
}

template <int N>
class StripedCounters {
 public:
  void Add(int counter, int64_t delta = 1) {
    const int stripe = ThisThreadStripe();
    std::atomic<int64_t>& v = stripes_[stripe].v[counter];
    if (stripe < kOwnedStripes) {
      v.store(v.load(std::memory_order_relaxed) + delta,
              std::memory_order_relaxed);
    } else {
      v.fetch_add(delta, std::memory_order_relaxed);
    }
  }
  int64_t Sum(int counter) const {
    int64_t sum = 0;
    for (const Stripe& s : stripes_) {
      sum += s.v[counter].load(std::memory_order_relaxed);
    }
    return sum;
  }

 private:
  struct alignas(64) Stripe {
    std::atomic<int64_t> v[N] = {};
  };
  Stripe stripes_[kOwnedStripes + 1];
};

}  // namespace tunedb

#endif  // TUNEDB_CLIENT_STRIPED_COUNTERS_H_
