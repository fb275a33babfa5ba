// Predictors of a key never tuned, compared on stored records (issue on
// unseen shapes): within each family (shape_predictor.h FamilyText), the
// keys are ordered by shape and every other one is held out; the rest are
// the tuned set. For each held-out key, each predictor names a config, and
// that config's time is read from the held-out key's own record (its search
// timed every candidate it kept), against the fastest there. Only steady
// times count (screened or re-timed results: AlgoResult::retimed); a
// config with only its Find time, its kernels' first run, counts as not
// timed, and a held-out key whose heuristic pick has no steady time is not
// judged (records searched before the search re-timed cuDNN's first choice
// often lack one):
//   - "nearest": PredictFrom, the nearest tuned shapes' vote (the daemon's);
//   - "family-best": learned from the tuned set, the config with the lowest
//     mean log-regret over the family's tuned keys that timed it (in at
//     least half of them);
//   - "heuristic": cuDNN's own first choice, as stored with the key
//     (heuristic mode A for the graph API, Get*_v7 for the legacy one);
//   - "tunedb": the key's own stored choice (what a tuned key gets);
//   - "another search" (only with `repeat`: records of another search of
//     the same keys): the choice that other search stored for the held-out
//     key, judged on this one's record. What no predictor can beat on these
//     records: the key's own answer, measured again. Where it is above 1,
//     that is the two searches' disagreement (timing noise, ties), and a
//     geomean below it cannot be told from noise.
// A predicted config that the held-out record did not time is replaced by
// the predictor's next candidate, then by the heuristic's (as a program
// falls back), and counted as a fallback. Each group is also split by the
// distance of the held-out key's nearest tuned shape ("graph f16, nearest
// <= 0.25", "... 0.25-1", "... > 1"): a program's new input size is near
// its stored ones, another model's layer is often far.
//
// CompareVersions judges the same way the old choices that the daemon
// serves as predictions after a cuDNN upgrade (version_predictor.h; issue
// "Upgrades without starting over"): on each key of the new (target)
// version that the old (source) version holds, "old choice" is the daemon's
// answer from the source records, against "heuristic" and "tunedb" of the
// target record.
//
// Thread safety: pure functions.
#ifndef TUNEDB_BENCH_PREDICT_PREDICTOR_COMPARE_H_
#define TUNEDB_BENCH_PREDICT_PREDICTOR_COMPARE_H_

#include <map>
#include <string>
#include <vector>

#include "tunedb/record.h"

namespace tunedb {

// One predictor over one group of held-out keys.
struct PredictorScore {
  int keys = 0;
  int fallbacks = 0;          // fell to a later candidate or the heuristic
  double geomean_ratio = 0;   // of chosen time / fastest time
  double share_over_5pct = 0; // share of keys more than 5 % off the fastest
  double worst_ratio = 0;
};

// A group (API and data type) and its predictors' scores, by name.
struct GroupScores {
  std::string group;  // e.g. "graph f16" or "graph f16, nearest <= 0.25"
  // Keys in the (whole) group's tuned set; comparing versions, the group's
  // target keys that the source holds, judged or not.
  int tuned = 0;
  std::map<std::string, PredictorScore> by_predictor;
};

// The comparison over `records` (one GPU model and cuDNN version; keys of
// other devices are compared within their own families). `neighbours` is
// PredictFrom's vote size. `repeat`, where not empty, is another search of
// (some of) the same keys: the "another search" row, over the held-out keys
// it holds.
std::vector<GroupScores> ComparePredictors(
    const std::vector<Record>& records, int neighbours,
    const std::vector<Record>& repeat = {});

// The predictors' names, in report order.
const std::vector<std::string>& PredictorNames();

// The old choices against the target version's own records.
struct VersionComparison {
  int target_keys = 0;     // target records read
  int held_by_source = 0;  // of those, keys the source holds
  int not_judged = 0;      // of those, without the steady times to judge
  // Judged keys where one of the old choice and the heuristic's pick runs
  // more than 5 % faster than the other.
  int old_choice_faster = 0;
  int heuristic_faster = 0;
  // "all", each API and data type, and that by operation ("graph f16,
  // fwd").
  std::vector<GroupScores> groups;
};

// For each key of `target` that `source` holds under another cuDNN version
// (OtherVersionsFilter, the daemon's read), judged on the target record as
// ComparePredictors judges a held-out key, for a program that asks with
// `caller` (the preload's defaults: compile_horizon_calls 10,000 and
// loads_stored_plans):
//   - "old choice": PredictFromOtherVersion from those source records, as
//     a Lookup that predicts from other versions gets it (no plan loads:
//     PredictionConstraints); its candidates fall back in order, then to
//     the heuristic;
//   - "heuristic": the target record's, as above;
//   - "tunedb": the target record's choice for `caller` (with its stored
//     plans where `caller` loads them).
// Only run times are compared: a runtime-compiled config's build, which
// the old choice weighs over the compile horizon, is not counted.
VersionComparison CompareVersions(const std::vector<Record>& source,
                                  const std::vector<Record>& target,
                                  const Constraints& caller);

// CompareVersions's predictors' names, in report order.
const std::vector<std::string>& VersionPredictorNames();

}  // namespace tunedb

#endif  // TUNEDB_BENCH_PREDICT_PREDICTOR_COMPARE_H_
