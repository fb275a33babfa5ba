// What tunedb stores per key: the whole ranking a search produced, with when,
// where and how it was measured; and the choice under a caller's constraints.
//
// One search measures every algorithm, so one record answers any workspace
// limit and determinism requirement. A record with no OK result is a stored
// negative answer ("no algorithm supports this problem").
//
// Thread safety: plain values.
#ifndef TUNEDB_RECORD_H_
#define TUNEDB_RECORD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tunedb/problem.h"

namespace tunedb {

// cudnnMathType_t of a measured algorithm.
enum class MathType {
  kDefault = 1,                  // CUDNN_DEFAULT_MATH
  kTensorOp = 2,                 // CUDNN_TENSOR_OP_MATH
  kTensorOpAllowConversion = 3,  // CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION
  kFma = 4,                      // CUDNN_FMA_MATH
};
absl::string_view MathTypeName(MathType m);  // "default", "tensor_op", ...
absl::StatusOr<MathType> ParseMathType(absl::string_view s);

enum class AlgoStatus { kOk = 1, kNotSupported = 2, kFailed = 3 };
absl::string_view AlgoStatusName(AlgoStatus s);  // "ok", "not_supported", ...
absl::StatusOr<AlgoStatus> ParseAlgoStatus(absl::string_view s);

// How the caller launches the convolution, which decides the cost that
// ranks the algorithms.
enum class LaunchMode {
  // Each pass is a direct cudnnConvolution* call: the caller waits for the
  // launch time, host cost included. The default.
  kDirect = 1,
  // The caller captures its passes into CUDA graphs and replays them: only
  // the GPU time counts.
  kGraph = 2,
};
absl::string_view LaunchModeName(LaunchMode m);  // "direct", "graph"
absl::StatusOr<LaunchMode> ParseLaunchMode(absl::string_view s);

// One timed quantity: the median over `samples` samples and their spread.
// samples == 0 means it was not measured.
struct Timing {
  double median_ms = 0;
  double spread_ms = 0;  // max - min over the samples
  int samples = 0;

  bool measured() const { return samples > 0; }
  friend bool operator==(const Timing& a, const Timing& b);
};

// One knob choice of a graph-API engine config: a cudnnBackendKnobType_t
// and its value.
struct Knob {
  int type = 0;
  int64_t value = 0;
  friend bool operator==(const Knob& a, const Knob& b) {
    return a.type == b.type && a.value == b.value;
  }
};
// "3=1,9=4" (type=value, in the order given); "" for none.
std::string KnobsText(const std::vector<Knob>& knobs);
// The inverse; INVALID_ARGUMENT on anything else.
absl::StatusOr<std::vector<Knob>> ParseKnobs(absl::string_view text);

// Bits of AlgoResult::numerical_notes and behavior_notes: bit i is note i
// of cuDNN's cudnnBackendNumericalNote_t / cudnnBackendBehaviorNote_t.
inline constexpr int kNumericalNoteTensorCore = 0;
inline constexpr int kNumericalNoteDownConvertInputs = 1;
inline constexpr int kNumericalNoteNondeterministic = 4;
inline constexpr int kBehaviorNoteRuntimeCompilation = 0;
// The bit of note `note` in a notes field (or in
// Constraints::excluded_numerical_notes).
constexpr uint32_t NoteBit(int note) { return uint32_t{1} << note; }
// "tensor_core,winograd" for the bits cuDNN 9 defines, "bit12" for others.
std::string NumericalNotesText(uint32_t notes);
std::string BehaviorNotesText(uint32_t notes);

// One algorithm's (legacy API) or engine config's (graph API) measurement.
struct AlgoResult {
  // Legacy: the cudnnConvolution*Algo_t value. Graph: the engine's global
  // index (CUDNN_ATTR_ENGINE_GLOBAL_INDEX).
  int algo = 0;
  MathType math_type = MathType::kDefault;
  AlgoStatus status = AlgoStatus::kOk;
  // Per call, in back-to-back direct launches: what a caller without graph
  // capture waits for (the larger of GPU and host time, roughly).
  Timing launch;
  // Per call, GPU time alone (CUDA-graph replays of the same launches).
  Timing gpu;
  // Per call, host CPU time spent inside the cuDNN call.
  Timing host;
  int64_t workspace_bytes = 0;
  bool deterministic = false;
  bool retimed = false;  // re-timed by tunedb after Find
  std::string error;     // for kFailed
  // Graph API only (empty / 0 for legacy results). The engine config is
  // (algo, knobs); math_type says whether it uses tensor cores
  // (kTensorOp) or not (kDefault), deterministic is the absence of the
  // nondeterministic note.
  std::vector<Knob> knobs;
  uint32_t numerical_notes = 0;
  uint32_t behavior_notes = 0;
  // The serialized execution plan (CUDNN_ATTR_EXECUTION_PLAN_JSON_
  // REPRESENTATION), kept for the leaders of a search: a process loads it
  // instead of building the plan. Empty when not kept.
  std::string plan;
  // Graph API: milliseconds the search spent building (for a runtime-
  // compiled engine: compiling) this config's plan; what a process that
  // cannot load a stored plan pays once. 0: not measured.
  double build_ms = 0;
  // Where cuDNN's own heuristic ranks it: 1 for the heuristic's first
  // choice (graph API: heuristic mode A, the list a framework with
  // benchmarking off builds from; legacy: cudnnGet*Algorithm_v7), 0 when
  // the heuristic does not offer it or was not asked.
  int heuristic_rank = 0;

  // The cost that ranks this result for callers launching in `mode`: the
  // launch time for kDirect, the GPU time for kGraph; where that one was not
  // measured, the other (records from before launch timing have GPU time
  // only; results a search did not re-time have only Find's launch sample).
  const Timing& cost(LaunchMode mode) const;

  friend bool operator==(const AlgoResult& a, const AlgoResult& b);
};

// What a record's times mean. Records of an older version than
// kCurrentTimingVersion are stale: still served, re-searched on the next Tune.
//   1: GPU time only (CUDA-graph replays), before launch timing.
//   2: launch, GPU and host time per call.
inline constexpr int kCurrentTimingVersion = 2;

// Everything stored for one key.
struct Record {
  int64_t id = 0;  // database row id; 0 until stored
  ProblemKey key;
  // OK results fastest first by the cost of direct launches (ties: less
  // workspace, then lower algo id), then not-supported, then failed ones.
  std::vector<AlgoResult> results;
  int64_t measured_at_us = 0;  // µs since the Unix epoch
  std::string host;
  std::string gpu_uuid;
  std::string driver_version;
  std::string finder;  // "cudnn" or "simulated"
  int repeats = 0;     // timed repeats per candidate
  int64_t workspace_cap_bytes = 0;
  double search_ms = 0;   // wall time of the search
  bool verified = false;  // chosen output matched a reference algorithm
  int64_t served_count = 0;
  int timing_version = kCurrentTimingVersion;  // see kCurrentTimingVersion
  // Where it came from: a revalidation (docs/revalidation.md) re-timed the
  // choices stored for the same problem under this older cuDNN version
  // (cuDNN's encoding, e.g. 91400) instead of searching in full; 0 for a
  // full search.
  int revalidated_from_cudnn = 0;
  // The same after a driver upgrade: the older driver (its driver_version
  // text, e.g. "575.57.08") under which the key's own record was measured
  // before a revalidation re-timed its choices under `driver_version`; ""
  // for a full search.
  std::string revalidated_from_driver;

  // True if at least one algorithm ran.
  bool supported() const;
  // Measured before launch timing (timing_version < kCurrentTimingVersion).
  bool stale() const { return timing_version < kCurrentTimingVersion; }
};

// Default of Constraints::compile_horizon_calls: 10,000 calls, about 3,300
// training iterations of a forward and two backward passes, where a 1 s
// compilation must save 0.1 ms per call to pay for itself.
inline constexpr int64_t kDefaultCompileHorizonCalls = 10000;

// The least gain, as a share of the heuristic's cost, that makes a tuned
// choice "measurably faster" than cuDNN's heuristic choice (Choose).
inline constexpr double kMinGainOverHeuristic = 0.02;

// A caller's limits on the algorithm it will run.
struct Constraints {
  // Largest workspace the caller can give; nullopt means unlimited.
  std::optional<int64_t> max_workspace_bytes;
  // Only algorithms cuDNN reports as deterministic.
  bool deterministic_only = false;
  // How the caller launches: decides which cost ranks the algorithms.
  LaunchMode launch_mode = LaunchMode::kDirect;
  // Graph API: only results whose numerical notes have none of these bits
  // (bit i: cuDNN's numerical note i, e.g. 1 << kNumericalNoteTensorCore).
  // Legacy results carry no notes, so it never excludes them. Default: 0.
  uint32_t excluded_numerical_notes = 0;
  // The calls over which a runtime-compiled engine's build time is repaid
  // (graph API): such a result without a plan the caller can load costs
  // build_ms / compile_horizon_calls more per call. 0: build time is not
  // weighed. Default: kDefaultCompileHorizonCalls.
  int64_t compile_horizon_calls = kDefaultCompileHorizonCalls;
  // Whether the caller loads a result's stored plan (AlgoResult::plan)
  // instead of building it; a result with one then costs nothing to build.
  // Default: false.
  bool loads_stored_plans = false;
};

// The OK result of `record` that meets the constraints with the lowest
// cost for their launch mode, build time weighed over the compile horizon
// (ties: less workspace); but cuDNN's heuristic choice among those that
// meet them (the lowest heuristic_rank) where the lowest-cost one does not
// beat it by kMinGainOverHeuristic: a caller never runs slower for being
// answered instead of asking the heuristic. nullopt when none meets them.
std::optional<AlgoResult> Choose(const Record& record,
                                 const Constraints& constraints);

}  // namespace tunedb

#endif  // TUNEDB_RECORD_H_
