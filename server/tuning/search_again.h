// A search again (docs/graph-api.md, "Searching again"): a key already
// stored for the same device and cuDNN version searched once more (forced,
// after a restart, on another host of the fleet). Its stored record, when
// current and measured under the same driver, says which configs cannot
// win: those far behind its leader are not run again, and their stored
// results are carried into the new record. The rules, as pure functions;
// TuningCore runs them around Finder::Search.
//
// Thread safety: pure functions.
#ifndef TUNEDB_SERVER_TUNING_SEARCH_AGAIN_H_
#define TUNEDB_SERVER_TUNING_SEARCH_AGAIN_H_

#include <cstdint>
#include <vector>

#include "tunedb/record.h"

namespace tunedb {

// How far behind the stored leader a config is not run again: its
// direct-launch cost at least this many times the fastest's. Why 5:
// docs/graph-api.md, "Searching again".
inline constexpr double kFarBehindFactor = 5;

// The OK results of graph-API record `stored` whose direct-launch cost is
// at least `factor` times its fastest's, as stored (their sealed plans
// too); never cuDNN's first `first_choices` heuristic choices, nor a config
// some framework filter chooses (caller_filters.h). Empty for a legacy-API
// record, a stale one (older timing version) or a factor of at most 1.
std::vector<AlgoResult> FarBehind(const Record& stored, double factor,
                                  int first_choices);

// Appends to `results` each of `far_behind` that the search did not return
// and that fits its `workspace_cap_bytes` (negative: no cap), as stored,
// and sorts them (SortResults). Nothing is carried where no config the
// search ran is OK: a far-behind config must not lead unmeasured.
void CarryFarBehind(const std::vector<AlgoResult>& far_behind,
                    int64_t workspace_cap_bytes,
                    std::vector<AlgoResult>& results);

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_SEARCH_AGAIN_H_
