// StripedCounters: N event counters that many threads bump without sharing
// a cache line, summed on read.
//
// Each thread is given one of kStripes cache-line-aligned stripes the first
// time it counts (round robin), so threads up to kStripes never write the
// same line; more threads share stripes, which stays correct (atomic adds).
//
// Thread safety: Add and Sum are thread-safe.
#ifndef TUNEDB_CLIENT_SRC_STRIPED_COUNTERS_H_
#define TUNEDB_CLIENT_SRC_STRIPED_COUNTERS_H_

#include <atomic>
#include <cstdint>

namespace tunedb {

inline constexpr int kCounterStripes = 64;

inline std::atomic<int> next_counter_stripe{0};

// This thread's stripe, 0 .. kCounterStripes-1.
inline int ThisThreadStripe() {
  static thread_local int stripe = -1;
  if (stripe < 0) {
    stripe = next_counter_stripe.fetch_add(1, std::memory_order_relaxed) %
             kCounterStripes;
  }
  return stripe;
}

template <int N>
class StripedCounters {
 public:
  void Add(int counter, int64_t delta = 1) {
    stripes_[ThisThreadStripe()].v[counter].fetch_add(
        delta, std::memory_order_relaxed);
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
  Stripe stripes_[kCounterStripes];
};

}  // namespace tunedb

#endif  // TUNEDB_CLIENT_SRC_STRIPED_COUNTERS_H_
