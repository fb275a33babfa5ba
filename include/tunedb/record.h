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
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
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

// One algorithm's measurement.
struct AlgoResult {
  int algo = 0;                         // cudnnConvolution*Algo_t value
  MathType math_type = MathType::kDefault;
  AlgoStatus status = AlgoStatus::kOk;
  double median_ms = 0;                 // median over `samples` repeats
  double spread_ms = 0;                 // max - min over the repeats
  int samples = 0;
  int64_t workspace_bytes = 0;
  bool deterministic = false;
  bool retimed = false;                 // re-timed by tunedb after Find
  std::string error;                    // for kFailed

  friend bool operator==(const AlgoResult& a, const AlgoResult& b);
};

// Everything stored for one key.
struct Record {
  int64_t id = 0;  // database row id; 0 until stored
  ProblemKey key;
  // OK results fastest first, then unsupported/failed ones (SortResults).
  std::vector<AlgoResult> results;
  int64_t measured_at_us = 0;  // µs since the Unix epoch
  std::string host;
  std::string gpu_uuid;
  std::string driver_version;
  std::string finder;  // "cudnn" or "simulated"
  int repeats = 0;     // timed repeats per candidate
  int64_t workspace_cap_bytes = 0;
  double search_ms = 0;  // wall time of the search
  bool verified = false;  // chosen output matched a reference algorithm
  int64_t served_count = 0;

  // True if at least one algorithm ran.
  bool supported() const;
};

// Puts OK results first by ascending median time (ties: less workspace, then
// lower algo id), then not-supported, then failed ones.
void SortResults(std::vector<AlgoResult>& results);

// A caller's limits on the algorithm it will run.
struct Constraints {
  // Largest workspace the caller can give; nullopt means unlimited.
  std::optional<int64_t> max_workspace_bytes;
  // Only algorithms cuDNN reports as deterministic.
  bool deterministic_only = false;
};

// The fastest OK result of `record` that meets `constraints`, or nullopt.
std::optional<AlgoResult> Choose(const Record& record,
                                 const Constraints& constraints);

}  // namespace tunedb

#endif  // TUNEDB_RECORD_H_
