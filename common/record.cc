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

}  // namespace

absl::string_view MathTypeName(MathType m) { return kMathNames.Name(m); }
absl::StatusOr<MathType> ParseMathType(absl::string_view s) {
  return kMathNames.Parse(s);
}
absl::string_view AlgoStatusName(AlgoStatus s) { return kStatusNames.Name(s); }
absl::StatusOr<AlgoStatus> ParseAlgoStatus(absl::string_view s) {
  return kStatusNames.Parse(s);
}

bool operator==(const AlgoResult& a, const AlgoResult& b) {
  return std::tie(a.algo, a.math_type, a.status, a.median_ms, a.spread_ms,
                  a.samples, a.workspace_bytes, a.deterministic, a.retimed,
                  a.error) == std::tie(b.algo, b.math_type, b.status,
                                       b.median_ms, b.spread_ms, b.samples,
                                       b.workspace_bytes, b.deterministic,
                                       b.retimed, b.error);
}

bool Record::supported() const {
  return std::any_of(results.begin(), results.end(), [](const AlgoResult& r) {
    return r.status == AlgoStatus::kOk;
  });
}

void SortResults(std::vector<AlgoResult>& results) {
  std::stable_sort(results.begin(), results.end(),
                   [](const AlgoResult& a, const AlgoResult& b) {
                     if (a.status != b.status) return a.status < b.status;
                     if (a.status != AlgoStatus::kOk) {
                       return std::tie(a.algo, a.math_type) <
                              std::tie(b.algo, b.math_type);
                     }
                     return std::tie(a.median_ms, a.workspace_bytes, a.algo) <
                            std::tie(b.median_ms, b.workspace_bytes, b.algo);
                   });
}

std::optional<AlgoResult> Choose(const Record& record,
                                 const Constraints& constraints) {
  const AlgoResult* best = nullptr;
  for (const AlgoResult& r : record.results) {
    if (r.status != AlgoStatus::kOk) continue;
    if (constraints.max_workspace_bytes &&
        r.workspace_bytes > *constraints.max_workspace_bytes) {
      continue;
    }
    if (constraints.deterministic_only && !r.deterministic) continue;
    if (best == nullptr || r.median_ms < best->median_ms ||
        (r.median_ms == best->median_ms &&
         r.workspace_bytes < best->workspace_bytes)) {
      best = &r;
    }
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

}  // namespace tunedb
