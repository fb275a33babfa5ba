// ProblemMeasurement: everything a regret run measured for one problem — the
// three picks (tunedb's choice, cudnnFind's first entry, cuDNN's heuristic),
// what each cost, what cuDNN reported, and the independent re-timing of every
// candidate any of them found — and the ratios derived from it.
//
// Thread safety: plain values; the functions are pure.
#ifndef TUNEDB_BENCH_REGRET_PROBLEM_MEASUREMENT_H_
#define TUNEDB_BENCH_REGRET_PROBLEM_MEASUREMENT_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "bench/regret/problem_set.h"
#include "cudnn/conv_ops.h"
#include "server/finder/finder.h"
#include "tunedb/record.h"

namespace tunedb::regret {

// Who made a pick.
enum class PickKind { kTunedb = 0, kFind = 1, kHeuristic = 2 };
inline constexpr std::array<PickKind, 3> kPickKinds = {
    PickKind::kTunedb, PickKind::kFind, PickKind::kHeuristic};
// "tunedb", "cudnnFind", "heuristic".
absl::string_view PickKindName(PickKind kind);

// One (algorithm, math type) a pick chose.
struct Pick {
  bool found = false;
  int algo = 0;
  MathType math = MathType::kDefault;
  int64_t workspace_bytes = 0;
  std::string note;  // why there is none, or what was passed over
};

// One cudnnFind*AlgorithmEx call.
struct FindRun {
  MathType math = MathType::kDefault;  // set on the descriptor for the call
  double wall_s = 0;
  std::vector<AlgoPerf> entries;  // as cuDNN returned them
  std::string error;              // the call failed
};

// One candidate as the truth re-timed it.
struct TimedCandidate {
  int algo = 0;
  MathType math = MathType::kDefault;
  int64_t workspace_bytes = 0;
  std::vector<std::string> found_by;  // PickKindName of whoever found it OK
  int batch = 0;                      // runs per sample
  bool graphed = false;               // samples replayed a CUDA graph
  std::vector<double> samples_ms;     // one per round, ms per run
  double median_ms = 0;
  std::string error;  // could not be timed; empty when it was
  bool timed() const { return error.empty() && !samples_ms.empty(); }
};

// Switch costs among a problem's fastest candidates (switch_matrix.h).
struct SwitchMatrixResult {
  struct Member {
    int algo = 0;
    MathType math = MathType::kDefault;
    // ms per call of back-to-back calls after one untimed call (the
    // steady cost; median over the repetitions).
    double steady_ms = 0;
  };
  std::vector<Member> members;
  // first_ms[p][c]: one call of member c right after member p's calls,
  // from an idle GPU (median). first_ms[c][c] is c after itself.
  std::vector<std::vector<double>> first_ms;
  std::vector<std::vector<double>> first_host_ms;  // its host time
  // run_host_ms[c][k]: host ms of the k-th of SwitchOptions::run_calls
  // back-to-back calls of member c right after the next member's calls
  // (median); alternating_host_ms[c][k] the same for c's k-th call when
  // its calls alternate with the next member's, one each.
  std::vector<std::vector<double>> run_host_ms;
  std::vector<std::vector<double>> alternating_host_ms;
  std::string error;  // not measured
};

struct ProblemMeasurement {
  RegretProblem problem;
  std::string error;  // the problem could not be measured at all

  std::array<Pick, 3> picks;  // by PickKind
  Pick& pick(PickKind k) { return picks[static_cast<int>(k)]; }
  const Pick& pick(PickKind k) const { return picks[static_cast<int>(k)]; }

  // tunedb: CudnnFinder::Search's wall time and what it returned.
  double search_s = 0;
  std::vector<AlgoResult> ranking;
  int64_t workspace_cap_bytes = 0;
  bool verified = false;
  SearchPhases phases;  // where the search's wall time went
  // cudnnFind: one call per math type; find_s is their wall time summed.
  std::vector<FindRun> find_runs;
  double find_s = 0;
  // The same calls made first, before tunedb's search (kernels not yet
  // loaded); 0 without the preload.
  double find_cold_s = 0;
  // cuDNN's heuristic ranking (cudnnGet*Algorithm_v7).
  std::vector<AlgoPerf> heuristic_entries;

  std::vector<TimedCandidate> candidates;
  // Only where asked for (SwitchOptions::candidates > 0).
  std::optional<SwitchMatrixResult> switch_matrix;
};

// The candidate for (algo, math), or null.
const TimedCandidate* FindCandidate(const ProblemMeasurement& m, int algo,
                                    MathType math);

// The fastest timed candidate, or null if none was timed.
const TimedCandidate* BestCandidate(const ProblemMeasurement& m);

// The pick's re-timed median over the best's; nullopt if the pick is missing
// or its candidate could not be timed.
std::optional<double> PickRatio(const ProblemMeasurement& m, PickKind kind);

}  // namespace tunedb::regret

#endif  // TUNEDB_BENCH_REGRET_PROBLEM_MEASUREMENT_H_
