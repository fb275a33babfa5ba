#include "server/search/verify.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "common/data_type_traits.h"
#include "common/record_results.h"
#include "common/status_macros.h"
#include "server/search/algo_failure.h"

namespace tunedb {
namespace {

constexpr int kMaxReferences = 2;
constexpr int kMaxAttempts = 3;
constexpr int kCpuAlgo = -1;  // the CPU reference's "algorithm"
// What a graph-API candidate is among the legacy references: none of them.
constexpr int kGraphCandidate = -2;

// A reference output: of a cuDNN algorithm, or of the CPU (kCpuAlgo).
struct Reference {
  int algo;
  MathType math;
  std::vector<float> output;

  bool Is(int a, MathType m) const { return algo == a && math == m; }
};

// The reference outputs of a verification, run one at a time and only when
// needed, in order of preference: up to kMaxReferences algorithms.
class References {
 public:
  References(CudnnConv& conv, DeviceSpan workspace,
             const std::vector<OutputWindow>& windows,
             const std::vector<AlgoResult>& results)
      : conv_(conv), workspace_(workspace), windows_(windows) {
    // Graph-API candidates are checked against legacy algorithms only
    // (the trusted ones first, on the same buffers).
    const bool graph = conv.problem().api == ConvApi::kGraph;
    if (graph) {
      order_ = {{0, MathType::kFma},     {1, MathType::kFma},
                {0, MathType::kDefault}, {1, MathType::kDefault},
                {2, MathType::kFma},     {3, MathType::kFma}};
      return;
    }
    // First the fastest other algorithm: cheap, and two algorithms that
    // agree are both right. Then the slow, trusted ones, then the rest.
    const int first = results.empty() ? -1 : results.front().algo;
    for (const AlgoResult& r : results) {
      if (r.status == AlgoStatus::kOk && r.algo != first) {
        order_.push_back({r.algo, r.math_type});
        break;
      }
    }
    order_.insert(
        order_.end(),
        {{0, MathType::kFma}, {1, MathType::kFma}, {0, MathType::kDefault}});
    for (const AlgoResult& r : results) {
      if (r.status == AlgoStatus::kOk) order_.push_back({r.algo, r.math_type});
    }
  }

  std::vector<Reference>& list() { return refs_; }

  // Runs the next references until one other than (algo, math) was added;
  // false when none could be (the list is full or nothing else runs).
  absl::StatusOr<bool> AddOtherThan(int algo, MathType math) {
    const int64_t cap = static_cast<int64_t>(workspace_.bytes);
    while (next_ < order_.size() && refs_.size() < kMaxReferences) {
      const auto [a, m] = order_[next_++];
      const bool dup = std::any_of(
          refs_.begin(), refs_.end(),
          [&, a = a, m = m](const Reference& r) { return r.Is(a, m); });
      if (dup) continue;
      absl::StatusOr<int64_t> need = conv_.WorkspaceSize(a, m);
      if (!need.ok() || *need > cap) continue;
      if (!conv_.Run(a, m, workspace_.ptr, workspace_.bytes).ok()) {
        RETURN_IF_ERROR(CheckStickyError());
        continue;
      }
      ASSIGN_OR_RETURN(std::vector<float> output,
                       conv_.ReadOutputWindows(windows_));
      refs_.push_back({a, m, std::move(output)});
      if (a != algo || m != math) return true;
    }
    return false;
  }

  // Whether a reference other than (algo, math) is in the list.
  bool HasOtherThan(int algo, MathType math) const {
    return std::any_of(refs_.begin(), refs_.end(),
                       [&](const Reference& r) { return !r.Is(algo, math); });
  }

 private:
  CudnnConv& conv_;
  const DeviceSpan workspace_;
  const std::vector<OutputWindow>& windows_;
  std::vector<std::pair<int, MathType>> order_;
  size_t next_ = 0;
  std::vector<Reference> refs_;
};

// The outcome of checking one choice.
struct Verdict {
  // False when the only reference is the choice itself: nothing to decide.
  bool conclusive = false;
  bool match = false;
  std::string why;  // the last mismatch, or why the choice did not run
};

// Runs `chosen` and compares its output with the references, adding the CPU
// reference when no other algorithm is among them (once: `cpu_tried`).
absl::StatusOr<Verdict> Check(CudnnConv& conv, ConvLauncher& launcher,
                              DeviceSpan workspace,
                              const std::vector<OutputWindow>& windows,
                              int64_t cpu_reference_max_macs,
                              const AlgoResult& chosen, int chosen_id,
                              std::vector<Reference>& refs, bool& cpu_tried) {
  Verdict v;
  const absl::Status s =
      launcher.Launch(chosen, workspace.ptr, workspace.bytes);
  if (!s.ok()) {
    RETURN_IF_ERROR(CheckStickyError());
    v.conclusive = true;  // it does not run: rejected like a mismatch
    v.why = std::string(s.message());
    return v;
  }
  ASSIGN_OR_RETURN(const std::vector<float> output,
                   conv.ReadOutputWindows(windows));
  const double tol = VerifyTolerance(conv.problem(), chosen.math_type);
  const bool other =
      std::any_of(refs.begin(), refs.end(), [&](const Reference& ref) {
        return !ref.Is(chosen_id, chosen.math_type);
      });
  if (!other && !cpu_tried) {
    cpu_tried = true;
    absl::StatusOr<std::vector<float>> cpu =
        conv.CpuReference(cpu_reference_max_macs);
    if (cpu.ok()) {
      refs.push_back({kCpuAlgo, MathType::kFma, TakeWindows(*cpu, windows)});
    }
  }
  for (const Reference& ref : refs) {
    if (ref.Is(chosen_id, chosen.math_type)) continue;
    v.conclusive = true;
    const double err = RelativeL2(output, ref.output);
    if (err <= tol) {
      v.match = true;
      return v;
    }
    v.why = ref.algo == kCpuAlgo
                ? absl::StrFormat(
                      "output differs from the CPU reference: relative L2 "
                      "%.3g > %.3g",
                      err, tol)
                : absl::StrFormat(
                      "output differs from algo %d (%s): relative L2 %.3g "
                      "> %.3g",
                      ref.algo, MathTypeName(ref.math), err, tol);
  }
  return v;
}

}  // namespace

double VerifyTolerance(const ConvProblem& p, MathType math) {
  const DataTypeTraits& t = DataTypeTraitsOf(p.input_type);
  return math == MathType::kFma ? t.fma_tolerance : t.tolerance;
}

double RelativeL2(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double diff = 0, ref = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    diff += d * d;
    ref += static_cast<double>(b[i]) * b[i];
  }
  if (!std::isfinite(diff) || !std::isfinite(ref)) {
    return std::numeric_limits<double>::infinity();
  }
  return std::sqrt(diff) / std::max(std::sqrt(ref), 1e-30);
}

absl::StatusOr<bool> Verify(CudnnConv& conv, ConvLauncher& launcher,
                            DeviceSpan workspace,
                            int64_t verify_max_elements,
                            int64_t cpu_reference_max_macs,
                            std::vector<AlgoResult>& results) {
  const bool graph = conv.problem().api == ConvApi::kGraph;
  const std::vector<OutputWindow> windows =
      OutputWindows(conv.OutputElements(), verify_max_elements);
  References refs(conv, workspace, windows, results);
  bool cpu_tried = false;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    if (results.empty() || results[0].status != AlgoStatus::kOk) break;
    AlgoResult& chosen = results[0];
    const int id = graph ? kGraphCandidate : chosen.algo;
    if (!refs.HasOtherThan(id, chosen.math_type)) {
      RETURN_IF_ERROR(refs.AddOtherThan(id, chosen.math_type).status());
    }
    ASSIGN_OR_RETURN(
        Verdict v, Check(conv, launcher, workspace, windows,
                         cpu_reference_max_macs, chosen, id, refs.list(),
                         cpu_tried));
    if (v.conclusive && !v.match) {
      // The reference may be the one that is wrong: a second one decides.
      ASSIGN_OR_RETURN(const bool added,
                       refs.AddOtherThan(id, chosen.math_type));
      if (added) {
        ASSIGN_OR_RETURN(v, Check(conv, launcher, workspace, windows,
                                  cpu_reference_max_macs, chosen, id,
                                  refs.list(), cpu_tried));
      }
    }
    if (!v.conclusive) break;
    if (v.match) return true;
    chosen.status = AlgoStatus::kFailed;
    chosen.error = v.why;
    SortResults(results);
  }
  return false;
}

}  // namespace tunedb
