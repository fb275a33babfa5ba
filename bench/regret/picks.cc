#include "bench/regret/picks.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/record_results.h"
#include "common/status_macros.h"
#include "cudnn/conv_descriptors.h"
#include "cudnn/conv_ops.h"
#include "cudnn/cudnn_status.h"
#include "server/search/algo_failure.h"
#include "server/search/candidates.h"
#include "server/search/workspace_offer.h"

namespace tunedb::regret {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

bool EntryOk(const AlgoPerf& e) {
  return e.status == CUDNN_STATUS_SUCCESS && e.time_ms >= 0;
}

// The larger of what cuDNN reported and what its workspace query says for
// (algo, math); the report alone if the query fails.
int64_t WorkspaceNeed(CudnnConv& conv, int algo, MathType math,
                      int64_t reported) {
  absl::StatusOr<int64_t> need = conv.WorkspaceSize(algo, math);
  return need.ok() ? std::max(reported, *need) : reported;
}

}  // namespace

absl::Status MeasureTunedb(CudnnFinder& finder, LaunchMode mode,
                           ProblemMeasurement& m) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<SearchResult> found =
      finder.Search(0, m.problem.problem, SearchOptions{});
  m.search_s = SecondsSince(start);
  if (!found.ok()) {
    if (IsFatalDeviceError(found.status())) return found.status();
    m.error = absl::StrCat("tunedb search: ", found.status().message());
    return absl::OkStatus();
  }
  Record record;
  record.key.problem = m.problem.problem;
  record.results = std::move(found->results);
  SortResults(record.results);
  m.workspace_cap_bytes = found->workspace_cap_bytes;
  m.verified = found->verified;
  m.phases = found->phases;
  Constraints constraints;
  constraints.launch_mode = mode;
  std::optional<AlgoResult> choice = Choose(record, constraints);
  Pick& pick = m.pick(PickKind::kTunedb);
  if (choice.has_value()) {
    pick.found = true;
    pick.algo = choice->algo;
    pick.math = choice->math_type;
    pick.workspace_bytes = choice->workspace_bytes;
  } else {
    pick.note = "no algorithm supported";
  }
  m.ranking = std::move(record.results);
  return absl::OkStatus();
}

absl::Status PreloadFind(cudnnHandle_t handle, cudaStream_t stream,
                         uint64_t seed, ProblemMeasurement& m) {
  absl::StatusOr<std::unique_ptr<CudnnConv>> conv =
      CudnnConv::Create(m.problem.problem, handle, stream, seed);
  if (!conv.ok()) return CheckStickyError();
  size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
    return CheckStickyError();
  }
  // What tunedb's search would offer by default (it reads free memory before
  // this conv's buffers exist), so that the same kernels load here.
  Workspace workspace;
  const int64_t offer = LegacyWorkspaceOffer(
      **conv,
      DefaultWorkspaceCap(static_cast<int64_t>(free_bytes), ConvApi::kLegacy));
  if (!workspace.Reserve(static_cast<size_t>(offer)).ok()) {
    return CheckStickyError();
  }
  for (MathType math : SearchMathTypes(m.problem.problem)) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::vector<AlgoPerf>> entries =
        (*conv)->Find(math, workspace.get(), workspace.bytes());
    m.find_cold_s += SecondsSince(start);
    if (!entries.ok()) RETURN_IF_ERROR(CheckStickyError());
  }
  return absl::OkStatus();
}

absl::Status MeasureFind(CudnnConv& conv, Workspace& workspace,
                         ProblemMeasurement& m) {
  const size_t offered = static_cast<size_t>(m.workspace_cap_bytes);
  if (absl::Status s = workspace.Reserve(offered); !s.ok()) {
    m.pick(PickKind::kFind).note = std::string(s.message());
    return absl::OkStatus();
  }
  std::optional<AlgoPerf> best;
  MathType best_math = MathType::kDefault;
  for (MathType math : SearchMathTypes(m.problem.problem)) {
    FindRun run;
    run.math = math;
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::vector<AlgoPerf>> entries =
        conv.Find(math, workspace.get(), offered);
    run.wall_s = SecondsSince(start);
    m.find_s += run.wall_s;
    if (!entries.ok()) {
      RETURN_IF_ERROR(CheckStickyError());
      run.error = std::string(entries.status().message());
      m.find_runs.push_back(std::move(run));
      continue;
    }
    run.entries = std::move(*entries);
    const auto first =
        std::find_if(run.entries.begin(), run.entries.end(), EntryOk);
    if (first != run.entries.end() &&
        (!best.has_value() || first->time_ms < best->time_ms)) {
      best = *first;
      best_math = math;
    }
    m.find_runs.push_back(std::move(run));
  }
  Pick& pick = m.pick(PickKind::kFind);
  if (!best.has_value()) {
    pick.note = "no OK entry under any math type";
    return absl::OkStatus();
  }
  pick.found = true;
  pick.algo = best->algo;
  pick.math = best_math;
  pick.workspace_bytes =
      WorkspaceNeed(conv, best->algo, best_math, best->memory);
  return absl::OkStatus();
}

absl::Status MeasureHeuristic(CudnnConv& conv, cudnnHandle_t handle,
                              cudaStream_t stream, Workspace& workspace,
                              ProblemMeasurement& m) {
  Pick& pick = m.pick(PickKind::kHeuristic);
  const ConvProblem& problem = m.problem.problem;
  absl::StatusOr<ConvDescriptors> descriptors = DescribeConv(problem);
  if (!descriptors.ok()) {
    pick.note = std::string(descriptors.status().message());
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<AlgoPerf>> entries =
      HeuristicAlgorithms(handle, problem.op, descriptors->view());
  if (!entries.ok()) {
    pick.note = std::string(entries.status().message());
    return absl::OkStatus();
  }
  m.heuristic_entries = std::move(*entries);
  int passed_over = 0;
  for (const AlgoPerf& e : m.heuristic_entries) {
    if (e.status != CUDNN_STATUS_SUCCESS) continue;
    const int64_t need = WorkspaceNeed(conv, e.algo, e.math, e.memory);
    absl::Status run = workspace.Reserve(static_cast<size_t>(need));
    if (run.ok()) {
      run = conv.Run(e.algo, e.math, workspace.get(), workspace.bytes());
    }
    if (run.ok()) {
      run = CudaStatusToAbsl(cudaStreamSynchronize(stream),
                             "cudaStreamSynchronize");
    }
    if (!run.ok()) {
      RETURN_IF_ERROR(CheckStickyError());
      ++passed_over;
      absl::StrAppend(&pick.note, pick.note.empty() ? "" : "; ", "algo ",
                      e.algo, " ", MathTypeName(e.math),
                      " did not run: ", run.message());
      continue;
    }
    pick.found = true;
    pick.algo = e.algo;
    pick.math = e.math;
    pick.workspace_bytes = need;
    return absl::OkStatus();
  }
  absl::StrAppend(&pick.note, pick.note.empty() ? "" : "; ",
                  "no reported entry ran (", passed_over, " tried)");
  return absl::OkStatus();
}

std::vector<TimedCandidate> CollectCandidates(CudnnConv& conv,
                                              const ProblemMeasurement& m) {
  std::vector<TimedCandidate> out;
  const auto add = [&](int algo, MathType math, int64_t workspace,
                       PickKind by) {
    const std::string name(PickKindName(by));
    for (TimedCandidate& c : out) {
      if (c.algo != algo || c.math != math) continue;
      c.workspace_bytes = std::max(c.workspace_bytes, workspace);
      if (std::find(c.found_by.begin(), c.found_by.end(), name) ==
          c.found_by.end()) {
        c.found_by.push_back(name);
      }
      return;
    }
    TimedCandidate c;
    c.algo = algo;
    c.math = math;
    c.workspace_bytes = WorkspaceNeed(conv, algo, math, workspace);
    c.found_by.push_back(name);
    out.push_back(std::move(c));
  };
  for (const AlgoResult& r : m.ranking) {
    if (r.status == AlgoStatus::kOk) {
      add(r.algo, r.math_type, r.workspace_bytes, PickKind::kTunedb);
    }
  }
  for (const FindRun& run : m.find_runs) {
    for (const AlgoPerf& e : run.entries) {
      if (EntryOk(e)) add(e.algo, run.math, e.memory, PickKind::kFind);
    }
  }
  const Pick& h = m.pick(PickKind::kHeuristic);
  if (h.found) add(h.algo, h.math, h.workspace_bytes, PickKind::kHeuristic);
  return out;
}

}  // namespace tunedb::regret
