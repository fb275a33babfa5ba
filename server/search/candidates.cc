#include "server/search/candidates.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/math_policy.h"
#include "common/record_results.h"
#include "common/status_macros.h"
#include "cudnn/cudnn_status.h"
#include "server/search/algo_failure.h"
#include "server/search/run_timer.h"

namespace tunedb {
namespace {

// One entry Find reported under `math`.
AlgoResult FromEntry(CudnnConv& conv, const CudnnConv::Entry& e, MathType math,
                     int64_t cap) {
  AlgoResult r;
  r.algo = e.algo;
  r.math_type = math;
  r.deterministic = e.deterministic;
  absl::StatusOr<int64_t> need = conv.WorkspaceSize(e.algo, math);
  if (e.status == CUDNN_STATUS_SUCCESS && e.time_ms >= 0) {
    r.status = AlgoStatus::kOk;
    // One direct call timed by Find: a launch-time sample, until screening
    // and re-timing measure it properly.
    r.launch = {e.time_ms, 0, 1};
    // Find's perf.memory can be less than what the algorithm asks for when
    // run on its own: store the larger of the two.
    r.workspace_bytes = need.ok() ? std::max(e.memory, *need) : e.memory;
  } else if (need.ok() && *need > cap) {
    r.status = AlgoStatus::kFailed;
    r.workspace_bytes = *need;
    r.error =
        absl::StrCat("needs ", *need, " bytes of workspace; the cap is ", cap);
  } else if (IsCudnnNotSupported(e.status)) {
    r.status = AlgoStatus::kNotSupported;
  } else {
    r.status = AlgoStatus::kFailed;
    r.error = cudnnGetErrorString(e.status);
    if (need.ok()) r.workspace_bytes = *need;
  }
  return r;
}

// Whether `a` is the better report of one (algorithm, math type): one that
// ran over one that did not, else the faster.
bool BetterReport(const AlgoResult& a, const AlgoResult& b) {
  if (a.status != b.status) return a.status == AlgoStatus::kOk;
  return a.status == AlgoStatus::kOk && a.launch.median_ms < b.launch.median_ms;
}

// Marks each result with its place in cuDNN's heuristic ranking
// (cudnnGet*Algorithm_v7 under the problem's own math type, as a framework
// that does not benchmark asks it): 1 for its first supported entry. A
// heuristic that fails ranks nothing.
void RankByHeuristic(CudnnConv& conv, std::vector<AlgoResult>& results) {
  const MathType math = PolicyMathType(conv.problem());
  absl::StatusOr<std::vector<CudnnConv::Entry>> entries = conv.Heuristic(math);
  if (!entries.ok()) return;
  int rank = 0;
  for (const CudnnConv::Entry& e : *entries) {
    if (e.status != CUDNN_STATUS_SUCCESS) continue;
    ++rank;
    const MathType m =
        MathTypeAllowed(conv.problem(), e.math) ? e.math : math;
    for (AlgoResult& r : results) {
      if (r.algo == e.algo && r.math_type == m && r.heuristic_rank == 0) {
        r.heuristic_rank = rank;
      }
    }
  }
}

}  // namespace

absl::StatusOr<std::vector<AlgoResult>> FindCandidates(CudnnConv& conv,
                                                       DeviceSpan workspace) {
  const int64_t cap = static_cast<int64_t>(workspace.bytes);
  std::map<std::pair<int, MathType>, AlgoResult> by_key;
  for (MathType math : SearchMathTypes(conv.problem())) {
    absl::StatusOr<std::vector<CudnnConv::Entry>> entries =
        conv.Find(math, workspace.ptr, workspace.bytes);
    if (!entries.ok()) {
      if (!absl::IsFailedPrecondition(entries.status())) {
        return entries.status();
      }
      // cuDNN supports no algorithm under this math type.
      for (int a = 0; a < conv.AlgoCount(); ++a) {
        AlgoResult r;
        r.algo = a;
        r.math_type = math;
        r.status = AlgoStatus::kNotSupported;
        by_key.emplace(std::make_pair(a, math), r);
      }
      continue;
    }
    for (const CudnnConv::Entry& e : *entries) {
      // Find may report one algorithm more than once in a call, under other
      // math types than the one asked for (algorithm 1 under tensor_op and
      // under default math, 6x apart): each is a candidate of its own, run
      // under the math type reported where the policy allows it.
      const MathType m =
          MathTypeAllowed(conv.problem(), e.math) ? e.math : math;
      AlgoResult r = FromEntry(conv, e, m, cap);
      auto [it, inserted] = by_key.emplace(std::make_pair(e.algo, m), r);
      if (!inserted && BetterReport(r, it->second)) it->second = std::move(r);
    }
  }
  RETURN_IF_ERROR(CheckStickyError());
  std::vector<AlgoResult> results;
  results.reserve(by_key.size());
  for (auto& [key, r] : by_key) results.push_back(std::move(r));
  RankByHeuristic(conv, results);
  RETURN_IF_ERROR(CheckStickyError());
  SortResults(results);
  return results;
}

namespace {

// One listed pair, run once from an idle GPU and timed (a launch-time
// sample), or why it did not run.
AlgoResult TimeListed(CudnnConv& conv, cudaStream_t stream,
                      DeviceSpan workspace, int algo, MathType math,
                      cudaEvent_t start, cudaEvent_t stop) {
  AlgoResult r;
  r.algo = algo;
  r.math_type = math;
  absl::StatusOr<int64_t> need = conv.WorkspaceSize(algo, math);
  if (!need.ok()) {
    r.status = absl::IsFailedPrecondition(need.status())
                   ? AlgoStatus::kNotSupported
                   : AlgoStatus::kFailed;
    r.error = std::string(need.status().message());
    return r;
  }
  r.workspace_bytes = *need;
  if (*need > static_cast<int64_t>(workspace.bytes)) {
    r.status = AlgoStatus::kFailed;
    r.error = absl::StrCat("needs ", *need, " bytes of workspace; the cap is ",
                           workspace.bytes);
    return r;
  }
  absl::StatusOr<DirectSample> sample =
      TimeDirectRuns(conv, stream, algo, math, workspace.ptr,
                     static_cast<size_t>(*need), /*batch=*/1, start, stop);
  if (!sample.ok()) {
    r.status = absl::IsFailedPrecondition(sample.status()) ||
                       absl::IsUnimplemented(sample.status())
                   ? AlgoStatus::kNotSupported
                   : AlgoStatus::kFailed;
    r.error = std::string(sample.status().message());
    return r;
  }
  r.status = AlgoStatus::kOk;
  r.launch = Timing{sample->launch_ms, 0, 1};
  r.host = Timing{sample->host_ms, 0, 1};
  return r;
}

}  // namespace

absl::StatusOr<std::vector<AlgoResult>> ListedCandidates(
    CudnnConv& conv, cudaStream_t stream, DeviceSpan workspace,
    const SearchOptions& search) {
  const ConvProblem& problem = conv.problem();
  std::vector<std::pair<int, MathType>> pairs;
  auto add = [&](int algo, MathType math) {
    if (algo < 0 || algo >= conv.AlgoCount() ||
        !MathTypeAllowed(problem, math)) {
      return;
    }
    const auto pair = std::make_pair(algo, math);
    if (std::find(pairs.begin(), pairs.end(), pair) == pairs.end()) {
      pairs.push_back(pair);
    }
  };
  for (const AlgoResult& r : search.retime_only) add(r.algo, r.math_type);
  // cuDNN's first choices, and every algorithm's determinism, as the
  // heuristic reports them.
  const MathType math = PolicyMathType(problem);
  std::map<int, bool> deterministic;
  absl::StatusOr<std::vector<CudnnConv::Entry>> entries = conv.Heuristic(math);
  if (entries.ok()) {
    int choices = 0;
    for (const CudnnConv::Entry& e : *entries) {
      if (e.status != CUDNN_STATUS_SUCCESS) continue;
      deterministic.emplace(e.algo, e.deterministic);
      if (choices++ < search.first_choices) {
        add(e.algo, MathTypeAllowed(problem, e.math) ? e.math : math);
      }
    }
  }
  RETURN_IF_ERROR(CheckStickyError());
  ASSIGN_OR_RETURN(CudaEvent start, CudaEvent::Create());
  ASSIGN_OR_RETURN(CudaEvent stop, CudaEvent::Create());
  std::vector<AlgoResult> results;
  for (const auto& [algo, m] : pairs) {
    AlgoResult r =
        TimeListed(conv, stream, workspace, algo, m, start.get(), stop.get());
    RETURN_IF_ERROR(CheckStickyError());
    auto d = deterministic.find(algo);
    r.deterministic = d != deterministic.end() && d->second;
    results.push_back(std::move(r));
  }
  RankByHeuristic(conv, results);
  RETURN_IF_ERROR(CheckStickyError());
  SortResults(results);
  return results;
}

}  // namespace tunedb
