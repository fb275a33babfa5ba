// A record's results as a search leaves them: the finders and the tuning
// core rank them (SortResults) and date their timing (TimingVersionOf)
// before they are stored. Not part of the installed API: a client reads
// records already ranked.
//
// Thread safety: pure functions.
#ifndef TUNEDB_COMMON_RECORD_RESULTS_H_
#define TUNEDB_COMMON_RECORD_RESULTS_H_

#include <vector>

#include "tunedb/record.h"

namespace tunedb {

// The timing version that `results` support: kCurrentTimingVersion when every
// OK result has its launch time measured (or none ran), else 1.
int TimingVersionOf(const std::vector<AlgoResult>& results);

// The OK result of `results` with the lowest cost for the constraints'
// launch mode that meets the other constraints (ties: less workspace), or
// null. Choose's rule, for a search's results before they are a record.
const AlgoResult* ChooseFrom(const std::vector<AlgoResult>& results,
                             const Constraints& constraints);

// Whether cuDNN notes `r`'s engine as compiled at run time (graph API).
inline bool RuntimeCompiled(const AlgoResult& r) {
  return (r.behavior_notes & NoteBit(kBehaviorNoteRuntimeCompilation)) != 0;
}

// Puts OK results first by ascending cost for direct launches (ties: less
// workspace, then lower algo id), then not-supported, then failed ones.
void SortResults(std::vector<AlgoResult>& results);

}  // namespace tunedb

#endif  // TUNEDB_COMMON_RECORD_RESULTS_H_
