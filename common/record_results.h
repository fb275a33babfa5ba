// A record's results as a search leaves them: the finders and the tuning
// core rank them (SortResults) and date their timing (TimingVersionOf)
// before they are stored. Not part of the installed API: a client reads
// records already ranked.
//
// Thread safety: pure functions.
#ifndef TUNEDB_COMMON_RECORD_RESULTS_H_
#define TUNEDB_COMMON_RECORD_RESULTS_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "tunedb/record.h"

namespace tunedb {

// The timing version that `results` support: kCurrentTimingVersion when every
// OK result has its launch time measured (or none ran), else 1.
int TimingVersionOf(const std::vector<AlgoResult>& results);

// Whether `r` ran and is one a caller with `constraints` may use (its
// workspace limit, determinism, excluded numerical notes).
bool Meets(const AlgoResult& r, const Constraints& constraints);

// Choose's rule (record.h), for a search's results before they are a
// record: the result Choose would give, or null.
const AlgoResult* ChooseFrom(const std::vector<AlgoResult>& results,
                             const Constraints& constraints);

// Whether cuDNN notes `r`'s engine as compiled at run time (graph API).
inline bool RuntimeCompiled(const AlgoResult& r) {
  return (r.behavior_notes & NoteBit(kBehaviorNoteRuntimeCompilation)) != 0;
}

// What `r` costs a caller with `constraints` per call: its cost for their
// launch mode, plus, for a runtime-compiled engine the caller builds
// (no stored plan it loads), build_ms spread over the compile horizon.
double EffectiveCost(const AlgoResult& r, const Constraints& constraints);

// cuDNN's own first choice among the OK results: the lowest heuristic_rank
// above 0; null when no OK result carries a rank. Choose weighs the fastest
// against it, so a search screens and re-times it whatever its first call
// cost (screen.h, retime.h).
AlgoResult* FirstChoiceOf(std::vector<AlgoResult>& results);

// Puts OK results first by ascending cost for direct launches (ties: less
// workspace, then lower algo id), then not-supported, then failed ones.
void SortResults(std::vector<AlgoResult>& results);

// A provenance `from` for a key of cuDNN `cudnn_version`: 0 (a full
// search) or another cuDNN version. INVALID_ARGUMENT naming `field`
// otherwise.
absl::Status CheckRevalidatedFrom(int from, int cudnn_version,
                                  absl::string_view field);
// The same for a record as it may be stored (revalidated_from_cudnn).
absl::Status CheckRevalidatedFrom(const Record& record);
// A record's revalidated_from_driver: "" (a full search) or a driver
// version (common/driver_version.h) of the form of the record's own
// driver_version and older than it. INVALID_ARGUMENT naming the field
// otherwise.
absl::Status CheckRevalidatedFromDriver(const Record& record);

}  // namespace tunedb

#endif  // TUNEDB_COMMON_RECORD_RESULTS_H_
