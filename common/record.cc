#include "tunedb/record.h"

#include <algorithm>
#include <tuple>

#include "common/enum_names.h"

namespace tunedb {
namespace {

constexpr EnumNames<MathType, 4> kMathNames(
    "math type",
    {{{MathType::kDefault, "default"},
      {MathType::kTensorOp, "tensor_op"},
      {MathType::kTensorOpAllowConversion, "tensor_op_allow_conversion"},
      {MathType::kFma, "fma"}}});
constexpr EnumNames<AlgoStatus, 3> kStatusNames(
    "algorithm status", {{{AlgoStatus::kOk, "ok"},
                          {AlgoStatus::kNotSupported, "not_supported"},
                          {AlgoStatus::kFailed, "failed"}}});
constexpr EnumNames<LaunchMode, 2> kLaunchModeNames(
    "launch mode",
    {{{LaunchMode::kDirect, "direct"}, {LaunchMode::kGraph, "graph"}}});

}  // namespace

absl::string_view MathTypeName(MathType m) { return kMathNames.Name(m); }
absl::StatusOr<MathType> ParseMathType(absl::string_view s) {
  return kMathNames.Parse(s);
}
absl::string_view AlgoStatusName(AlgoStatus s) { return kStatusNames.Name(s); }
absl::StatusOr<AlgoStatus> ParseAlgoStatus(absl::string_view s) {
  return kStatusNames.Parse(s);
}

absl::string_view LaunchModeName(LaunchMode m) {
  return kLaunchModeNames.Name(m);
}
absl::StatusOr<LaunchMode> ParseLaunchMode(absl::string_view s) {
  return kLaunchModeNames.Parse(s);
}

bool operator==(const Timing& a, const Timing& b) {
  return std::tie(a.median_ms, a.spread_ms, a.samples) ==
         std::tie(b.median_ms, b.spread_ms, b.samples);
}

const Timing& AlgoResult::cost(LaunchMode mode) const {
  const Timing& wanted = mode == LaunchMode::kGraph ? gpu : launch;
  const Timing& other = mode == LaunchMode::kGraph ? launch : gpu;
  return wanted.measured() || !other.measured() ? wanted : other;
}

bool operator==(const AlgoResult& a, const AlgoResult& b) {
  return std::tie(a.algo, a.math_type, a.status, a.launch, a.gpu, a.host,
                  a.workspace_bytes, a.deterministic, a.retimed, a.error) ==
         std::tie(b.algo, b.math_type, b.status, b.launch, b.gpu, b.host,
                  b.workspace_bytes, b.deterministic, b.retimed, b.error);
}

bool Record::supported() const {
  return std::any_of(results.begin(), results.end(), [](const AlgoResult& r) {
    return r.status == AlgoStatus::kOk;
  });
}

int TimingVersionOf(const std::vector<AlgoResult>& results) {
  for (const AlgoResult& r : results) {
    if (r.status == AlgoStatus::kOk && !r.launch.measured()) return 1;
  }
  return kCurrentTimingVersion;
}

void SortResults(std::vector<AlgoResult>& results) {
  std::stable_sort(results.begin(), results.end(),
                   [](const AlgoResult& a, const AlgoResult& b) {
                     if (a.status != b.status) return a.status < b.status;
                     if (a.status != AlgoStatus::kOk) {
                       return std::tie(a.algo, a.math_type) <
                              std::tie(b.algo, b.math_type);
                     }
                     const double ca = a.cost(LaunchMode::kDirect).median_ms;
                     const double cb = b.cost(LaunchMode::kDirect).median_ms;
                     return std::tie(ca, a.workspace_bytes, a.algo) <
                            std::tie(cb, b.workspace_bytes, b.algo);
                   });
}

std::optional<AlgoResult> Choose(const Record& record,
                                 const Constraints& constraints) {
  const LaunchMode mode = constraints.launch_mode;
  const AlgoResult* best = nullptr;
  for (const AlgoResult& r : record.results) {
    if (r.status != AlgoStatus::kOk) continue;
    if (constraints.max_workspace_bytes &&
        r.workspace_bytes > *constraints.max_workspace_bytes) {
      continue;
    }
    if (constraints.deterministic_only && !r.deterministic) continue;
    const double cost = r.cost(mode).median_ms;
    const double best_cost = best ? best->cost(mode).median_ms : 0;
    if (best == nullptr || cost < best_cost ||
        (cost == best_cost && r.workspace_bytes < best->workspace_bytes)) {
      best = &r;
    }
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

}  // namespace tunedb
