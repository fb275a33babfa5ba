// Two record sets' choices for the same keys, paired, and how far apart
// they are once re-timed side by side: how `tunedb_graph_regret --phase
// agree` judges a revalidation (docs/revalidation.md) against a full
// search of the same keys, or any two exports against each other.
//
// Thread safety: pure functions on values.
#ifndef TUNEDB_BENCH_REGRET_CHOICE_PAIRS_H_
#define TUNEDB_BENCH_REGRET_CHOICE_PAIRS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/regret/group_summary.h"
#include "tunedb/record.h"

namespace tunedb::regret {

// One key's two choices (Choose with no caller limits).
struct ChoicePair {
  ProblemKey key;
  AlgoResult judged;     // from the set being judged (a revalidation)
  AlgoResult reference;  // from the reference set (a full search)
  bool same_config() const {
    return judged.algo == reference.algo && judged.knobs == reference.knobs &&
           judged.math_type == reference.math_type;
  }
};

struct ChoicePairs {
  std::vector<ChoicePair> pairs;  // in the judged file's order
  int64_t other_version = 0;      // keys of another cuDNN version, skipped
  int64_t unmatched = 0;          // judged keys the reference lacks
  int64_t no_choice = 0;          // either record has no OK result
};

// Reads two export files (docs/export-format.md) and pairs their records by
// key, keeping keys of cuDNN `cudnn_version` (cuDNN's encoding; 0 keeps
// every version). NOT_FOUND for a file that cannot be opened,
// INVALID_ARGUMENT naming the file and line of a bad record.
absl::StatusOr<ChoicePairs> ReadChoicePairs(const std::string& judged_path,
                                            const std::string& reference_path,
                                            int cudnn_version);

// The verdict over every key's judged ÷ reference time (both re-timed in
// the same rounds; below 1 where the judged choice is faster): the ratios'
// worst, geometric mean and keys over 10 % (SummarizeRatios), and the keys
// within kAgreementTolerance.
inline constexpr double kAgreementTolerance = 0.02;
struct AgreementSummary {
  PickSummary ratios;
  int within_tolerance = 0;
  int same_config = 0;  // keys whose two choices are one config
  double share_within() const {
    return ratios.ratios > 0
               ? static_cast<double>(within_tolerance) / ratios.ratios
               : 0;
  }
};
AgreementSummary SummarizeAgreement(const std::vector<double>& ratios,
                                    int same_config);

}  // namespace tunedb::regret

#endif  // TUNEDB_BENCH_REGRET_CHOICE_PAIRS_H_
