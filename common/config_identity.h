// Config identity: when two results are of one config. Two rules, each
// written once:
//  - SameConfig: the same algorithm (graph API: engine), math type and
//    knobs: one config a search builds, times and stores once.
//  - SameAlgoAndKnobs: the same algorithm and knobs, whatever the math
//    type: one graph-API engine config (its math type follows from its
//    numerical notes), or one legacy algorithm timed with default and with
//    tensor-op math (a search's twins).
//
// Thread safety: pure functions.
#ifndef TUNEDB_COMMON_CONFIG_IDENTITY_H_
#define TUNEDB_COMMON_CONFIG_IDENTITY_H_

#include <vector>

#include "tunedb/record.h"

namespace tunedb {

// Whether two results are of one config (algorithm, math type and knobs).
inline bool SameConfig(const AlgoResult& a, const AlgoResult& b) {
  return a.algo == b.algo && a.math_type == b.math_type && a.knobs == b.knobs;
}

// Whether two results are of one algorithm with the same knobs, their math
// types aside.
inline bool SameAlgoAndKnobs(const AlgoResult& a, const AlgoResult& b) {
  return a.algo == b.algo && a.knobs == b.knobs;
}

// Whether `list` holds `r`'s config (SameConfig).
inline bool ListsConfig(const std::vector<AlgoResult>& list,
                        const AlgoResult& r) {
  for (const AlgoResult& c : list) {
    if (SameConfig(c, r)) return true;
  }
  return false;
}

}  // namespace tunedb

#endif  // TUNEDB_COMMON_CONFIG_IDENTITY_H_
