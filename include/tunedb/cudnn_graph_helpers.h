// cuDNN graph-API helpers: tuned engine configs and ready execution plans
// for programs that build cuDNN graphs (cudnnBackend*) themselves.
//
// Two ways in:
//   - the caller has its own finalized operation graph: TunedEngineConfig()
//     gives the tuned engine config for it (engine id + knobs from tunedb,
//     finalized on that graph), ready for its own plan;
//   - the caller lets tunedb describe the convolution: GetExecutionPlan()
//     gives a finalized plan for a graph-API key, loaded from the stored
//     serialized plan where there is one (no compilation), else built
//     from the tuned engine id and knobs, else from cuDNN's heuristic
//     (mode A's first config that builds). A stored plan that
//     cuDNN refuses (another cuDNN, driver or SM count) is reported in
//     `fallback` and the next way is taken. RunPlan() executes it on
//     tensors bound to the uids kGraphUidX/W/Y (x input, w filter, y
//     output, in forward terms whatever the pass).
//
// The key guards every blob: a plan is only loaded for the exact key it was
// stored under (GPU model, SM count, cuDNN and CUDA versions, shapes,
// types, layout, alignment and math policy). Misses never block past the
// client's miss policy (Client::GetEngine).
//
//   tunedb::ProblemKey key{device, problem};   // problem.api = kGraph
//   auto plan = tunedb::GetExecutionPlan(*client, handle, key).value();
//   tunedb::RunPlan(handle, plan, x, w, y, workspace);  // >= plan.workspace_bytes
//
// Available when tunedb was built with cuDNN (TUNEDB_HAVE_CUDNN).
//
// Thread safety: as thread-safe as the cuDNN calls they make; a plan
// belongs to one thread at a time.
#ifndef TUNEDB_CUDNN_GRAPH_HELPERS_H_
#define TUNEDB_CUDNN_GRAPH_HELPERS_H_

#include <cudnn.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tunedb/client.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

// Tensor unique ids of the graphs tunedb describes.
inline constexpr int64_t kGraphUidX = 1;
inline constexpr int64_t kGraphUidW = 2;
inline constexpr int64_t kGraphUidY = 3;

// Where a plan came from.
enum class PlanSource {
  kStoredPlan = 1,    // tunedb's serialized plan, loaded (nothing compiled)
  kEngineConfig = 2,  // built from tunedb's engine id and knobs
  kHeuristic = 3,     // built from cuDNN's heuristic (a miss)
};
std::string_view PlanSourceName(PlanSource s);  // "stored_plan", ...

// A finalized execution plan, owned (move-only).
class ExecutionPlan {
 public:
  ExecutionPlan() = default;
  ExecutionPlan(ExecutionPlan&& other) noexcept;
  ExecutionPlan& operator=(ExecutionPlan&& other) noexcept;
  ExecutionPlan(const ExecutionPlan&) = delete;
  ExecutionPlan& operator=(const ExecutionPlan&) = delete;
  ~ExecutionPlan();

  cudnnBackendDescriptor_t get() const { return plan_; }
  // Gives up ownership: the caller destroys the returned descriptor.
  cudnnBackendDescriptor_t release() { return std::exchange(plan_, nullptr); }
  PlanSource source = PlanSource::kHeuristic;
  int engine = -1;              // the engine's global index
  int64_t workspace_bytes = 0;  // what RunPlan's workspace must hold
  std::string fallback;         // why an earlier way was not taken, or ""

 private:
  friend absl::StatusOr<ExecutionPlan> GetExecutionPlan(
      Client&, cudnnHandle_t, const ProblemKey&, const Constraints&);
  cudnnBackendDescriptor_t plan_ = nullptr;
};

// See above. Errors: a key that is not a valid graph-API key
// (INVALID_ARGUMENT), or a convolution for which no way gives a plan.
absl::StatusOr<ExecutionPlan> GetExecutionPlan(
    Client& client, cudnnHandle_t handle, const ProblemKey& key,
    const Constraints& constraints = {});

// Executes `plan` on the handle's stream with x, w, y bound to kGraphUidX,
// kGraphUidW, kGraphUidY.
absl::Status RunPlan(cudnnHandle_t handle, const ExecutionPlan& plan, void* x,
                     void* w, void* y, void* workspace);

// The tuned engine config of graph-API `key` finalized on the caller's own
// finalized `op_graph` (which must describe the key's convolution); the
// caller owns the returned CUDNN_BACKEND_ENGINECFG_DESCRIPTOR. NOT_FOUND on
// a miss (the caller uses its heuristic); cuDNN's error when the engine or
// a knob does not apply to the graph.
absl::StatusOr<cudnnBackendDescriptor_t> TunedEngineConfig(
    Client& client, const ProblemKey& key, cudnnBackendDescriptor_t op_graph,
    const Constraints& constraints = {});

}  // namespace tunedb

#endif  // TUNEDB_CUDNN_GRAPH_HELPERS_H_
