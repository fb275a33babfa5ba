// MergeTuned: the perf array a Find or Get_v7 call returns on a tunedb hit,
// in the caller's cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t layout:
// the tuned choices first (the fastest, then the fastest deterministic one
// when that is another), then cuDNN's own heuristic list (from the real
// cudnnGet*Algorithm_v7) without those, so a caller that cannot use the
// first entries (workspace allocation fails, determinism required) still
// has cuDNN's fallbacks. Entries that need more workspace than a FindEx
// caller gave are left out; entries the heuristic reports not supported are
// kept at its position, as cuDNN reports them.
//
// Thread safety: pure functions.
#ifndef TUNEDB_PRELOAD_PERF_MERGE_H_
#define TUNEDB_PRELOAD_PERF_MERGE_H_

#include <cudnn.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace tunedb::preload {

// One tuned choice, as the client answered it.
struct TunedChoice {
  int algo = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  int64_t workspace_bytes = 0;
  // The determinism tunedb knows for it; nullopt: take the heuristic's.
  std::optional<bool> deterministic;
};

// Writes at most `capacity` entries to `out`; returns how many. `heuristic`
// holds `heuristic_count` entries from the real Get_v7 on the same
// descriptors. `workspace_limit` is a FindEx caller's workspace size.
template <typename Perf>
int MergeTuned(const std::vector<TunedChoice>& tuned, const Perf* heuristic,
               int heuristic_count, std::optional<size_t> workspace_limit,
               Perf* out, int capacity) {
  int n = 0;
  auto fits = [&](size_t memory) {
    return !workspace_limit.has_value() || memory <= *workspace_limit;
  };
  auto same = [](const Perf& p, int algo, cudnnMathType_t math) {
    return static_cast<int>(p.algo) == algo && p.mathType == math;
  };
  for (const TunedChoice& t : tuned) {
    if (n == capacity) return n;
    const Perf* match = nullptr;
    for (int i = 0; i < heuristic_count; ++i) {
      if (same(heuristic[i], t.algo, t.math)) match = &heuristic[i];
    }
    Perf p{};
    if (match != nullptr) p = *match;
    p.algo = static_cast<decltype(p.algo)>(t.algo);
    p.mathType = t.math;
    p.status = CUDNN_STATUS_SUCCESS;  // tunedb ran it on this problem
    p.time = -1.0f;  // not measured in this process (as Get_v7 reports)
    p.memory = std::max<size_t>(
        match != nullptr ? match->memory : 0,
        static_cast<size_t>(std::max<int64_t>(0, t.workspace_bytes)));
    if (t.deterministic.has_value()) {
      p.determinism =
          *t.deterministic ? CUDNN_DETERMINISTIC : CUDNN_NON_DETERMINISTIC;
    } else if (match == nullptr) {
      p.determinism = CUDNN_NON_DETERMINISTIC;  // unknown: not claimed
    }
    if (!fits(p.memory)) continue;
    bool repeated = false;
    for (int i = 0; i < n; ++i) repeated |= same(out[i], t.algo, t.math);
    if (!repeated) out[n++] = p;
  }
  for (int i = 0; i < heuristic_count && n < capacity; ++i) {
    const Perf& h = heuristic[i];
    bool repeated = false;
    for (int j = 0; j < n; ++j) {
      repeated |= same(out[j], static_cast<int>(h.algo), h.mathType);
    }
    if (repeated) continue;
    if (h.status == CUDNN_STATUS_SUCCESS && !fits(h.memory)) continue;
    out[n++] = h;
  }
  return n;
}

}  // namespace tunedb::preload

#endif  // TUNEDB_PRELOAD_PERF_MERGE_H_
