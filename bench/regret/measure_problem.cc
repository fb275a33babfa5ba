#include "bench/regret/measure_problem.h"

#include <algorithm>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "bench/regret/picks.h"
#include "bench/regret/workspace.h"
#include "common/status_macros.h"
#include "cudnn/cudnn_conv.h"
#include "server/search/algo_failure.h"

namespace tunedb::regret {

absl::Status MeasureProblem(const RegretContext& ctx, ProblemMeasurement& m) {
  if (ctx.preload_find) {
    RETURN_IF_ERROR(PreloadFind(ctx.handle, ctx.stream, ctx.seed, m));
  }
  RETURN_IF_ERROR(MeasureTunedb(*ctx.finder, ctx.truth.batch.mode, m));
  if (!m.error.empty()) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<CudnnConv>> conv =
      CudnnConv::Create(m.problem.problem, ctx.handle, ctx.stream, ctx.seed);
  if (!conv.ok()) {
    RETURN_IF_ERROR(CheckStickyError());
    m.error =
        absl::StrCat("descriptors and buffers: ", conv.status().message());
    return absl::OkStatus();
  }
  Workspace workspace;
  RETURN_IF_ERROR(MeasureFind(**conv, workspace, m));
  RETURN_IF_ERROR(
      MeasureHeuristic(**conv, ctx.handle, ctx.stream, workspace, m));
  m.candidates = CollectCandidates(**conv, m);
  int64_t need = 0;
  for (const TimedCandidate& c : m.candidates) {
    need = std::max(need, c.workspace_bytes);
  }
  if (absl::Status s = workspace.Reserve(static_cast<size_t>(need)); !s.ok()) {
    // Too much for the device: time those within the search's cap.
    const int64_t cap = m.workspace_cap_bytes;
    for (TimedCandidate& c : m.candidates) {
      if (c.workspace_bytes > cap) {
        c.error = absl::StrCat("needs ", c.workspace_bytes,
                               " bytes of workspace: ", s.message());
      }
    }
    if (absl::Status again = workspace.Reserve(static_cast<size_t>(cap));
        !again.ok()) {
      m.error = absl::StrCat("workspace: ", again.message());
      return absl::OkStatus();
    }
  }
  RETURN_IF_ERROR(
      TimeCandidates(**conv, ctx.stream, workspace, ctx.truth, m.candidates));
  if (BestCandidate(m) == nullptr) {
    m.error = "no candidate could be timed";
    return absl::OkStatus();
  }
  return MeasureSwitchMatrix(**conv, ctx.stream, workspace, ctx.switch_matrix,
                             m);
}

}  // namespace tunedb::regret
