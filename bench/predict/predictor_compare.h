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
//   - "tunedb": the key's own stored choice (what a tuned key gets).
// A predicted config that the held-out record did not time is replaced by
// the predictor's next candidate, then by the heuristic's (as a program
// falls back), and counted as a fallback. Each group is also split by the
// distance of the held-out key's nearest tuned shape ("graph f16, nearest
// <= 0.25", "... 0.25-1", "... > 1"): a program's new input size is near
// its stored ones, another model's layer is often far.
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
  int tuned = 0;      // keys in the (whole) group's tuned set
  std::map<std::string, PredictorScore> by_predictor;
};

// The comparison over `records` (one GPU model and cuDNN version; keys of
// other devices are compared within their own families). `neighbours` is
// PredictFrom's vote size.
std::vector<GroupScores> ComparePredictors(const std::vector<Record>& records,
                                           int neighbours);

// The predictors' names, in report order.
const std::vector<std::string>& PredictorNames();

}  // namespace tunedb

#endif  // TUNEDB_BENCH_PREDICT_PREDICTOR_COMPARE_H_
