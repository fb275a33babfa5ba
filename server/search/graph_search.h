// The graph-API (cuDNN backend) parts of a search: what differs from the
// legacy search, which CudnnFinder runs for problems with api=graph. The
// shared phases (screening, re-timing, verification) run unchanged through
// a GraphLauncher.
//   1. GraphCandidates: the engine configs of heuristic modes A and B and
//      the fallback list, without repeats, minus those the problem's policy
//      forbids (tensor cores when tc=0; tensor cores and down-converted
//      inputs for f32 when tf32=0). Each is built into an execution plan
//      (engines that compile at run time only within
//      CudnnFinderOptions::graph_compile_budget) and run once, timed, as
//      PyTorch's benchmark mode does: its first launch-time sample.
//   2-4. screen.h, retime.h, verify.h as for the legacy API (verification
//      against legacy algorithms on the same buffers).
//   5. KeepPlans: the plans of the leader, the close runners-up and every
//      runtime-compiled config that ran, serialized
//      into their results, so a fresh process loads them instead of
//      building (compiling) them.
//
// Thread safety: none; one search at a time.
#ifndef TUNEDB_SERVER_SEARCH_GRAPH_SEARCH_H_
#define TUNEDB_SERVER_SEARCH_GRAPH_SEARCH_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/math_policy.h"  // GraphPolicyAllows
#include "cudnn/backend_graph.h"
#include "cudnn/cudnn_conv.h"
#include "server/search/conv_launcher.h"
#include "server/finder/finder.h"  // SearchOptions, SearchPhases
#include "server/search/cudnn_finder_options.h"
#include "tunedb/record.h"

namespace tunedb {

// Runs the plans of graph-API candidates on the conv's buffers, on
// `stream` (set on the handle before every launch: the legacy calls set it
// only when they run, and a plan run on another stream than the timing
// events' would be timed as if it took no GPU time).
class GraphLauncher final : public ConvLauncher {
 public:
  GraphLauncher(cudnnHandle_t handle, cudaStream_t stream,
                const ConvBuffers& buffers)
      : handle_(handle), stream_(stream), buffers_(buffers) {}

  // Makes `plan` the one that runs for r's engine config.
  void Add(const AlgoResult& r, BackendDescriptor plan);
  // The plan of r's engine config, or null.
  cudnnBackendDescriptor_t PlanOf(const AlgoResult& r) const;

  // FAILED_PRECONDITION when r has no plan.
  absl::Status Launch(const AlgoResult& r, void* workspace,
                      size_t workspace_bytes) override;

 private:
  struct Entry {
    BackendDescriptor plan;
    BackendDescriptor pack;  // for pack_workspace
    void* pack_workspace = nullptr;
  };
  cudnnHandle_t handle_;
  cudaStream_t stream_;
  ConvBuffers buffers_;
  std::map<CandidateKey, Entry> plans_;
};

// Phase 1 (see above) with `workspace` offered. A config with a plan in
// search.stored_plans loads it instead of building it (compiling), and so
// spends none of the compile budget; one cuDNN refuses is built. Configs
// search.far_behind lists are not built (cuDNN's first choices aside). A
// revalidation (search.retime_only) builds and times only the configs it
// lists and cuDNN's first search.first_choices choices (the first mode-A
// configs the problem's policy allows). Results sorted by SortResults; each OK one has its plan in
// `launcher`. Errors: the fatal one of a broken CUDA context, or an
// operation graph cuDNN refuses for a reason other than not supporting it
// (then every result is kNotSupported). `phases` (optional) receives the
// time spent asking the heuristics and the number of plans loaded.
absl::StatusOr<std::vector<AlgoResult>> GraphCandidates(
    const ConvOpGraph& graph, GraphLauncher& launcher, cudaStream_t stream,
    DeviceSpan workspace, const CudnnFinderOptions& options,
    const SearchOptions& search = {}, SearchPhases* phases = nullptr);

// Phase 5: serializes into results[i].plan the plans of the leader and the
// runners-up within options.graph_plan_margin (graph_plans_kept in all),
// and of every runtime-compiled config that ran.
absl::Status KeepPlans(const GraphLauncher& launcher,
                       const CudnnFinderOptions& options,
                       std::vector<AlgoResult>& results);

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SEARCH_GRAPH_SEARCH_H_
