// cuDNN's graph (backend) API for one convolution, written directly against
// cudnn.h: a ConvProblem becomes an operation graph of one convolution node
// (fprop, dgrad or wgrad; 2-D or 3-D; any layout, type, groups and
// dilation), whose engine configs come from cuDNN's heuristics and become
// execution plans, built from an engine id and knobs or loaded from their
// serialized (JSON) form, and executed on caller buffers.
//
// The finder (server/search/graph_search.h) and the client's plan helpers
// (include/tunedb/cudnn_helpers.h) both build graphs here, so what is
// searched and what a caller loads describe the same convolution. Operand
// unique ids are fixed: kUidX, kUidW, kUidY in forward terms (x input, w
// filter, y output, whatever the pass); a variant pack binds those three.
//
// Thread safety: none; descriptors belong to one thread at a time, as cuDNN
// requires. The free functions are stateless.
#ifndef TUNEDB_CUDNN_BACKEND_GRAPH_H_
#define TUNEDB_CUDNN_BACKEND_GRAPH_H_

#include <cudnn.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cudnn/cudnn_handles.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

using BackendDescriptor =
    CudnnObject<cudnnBackendDescriptor_t, cudnnBackendDestroyDescriptor>;

// A new, unfinalized backend descriptor of `type`.
absl::StatusOr<BackendDescriptor> CreateBackendDescriptor(
    cudnnBackendDescriptorType_t type);

inline constexpr int64_t kUidX = 1;
inline constexpr int64_t kUidW = 2;
inline constexpr int64_t kUidY = 3;

// The heuristic sources of engine configs.
enum class HeuristicMode { kInstant, kA, kB, kFallback };

// One engine config as cuDNN describes it: the identity a result stores
// (engine global index, knobs) and its notes, plus the finalized
// CUDNN_BACKEND_ENGINECFG_DESCRIPTOR a plan is built from.
struct EngineConfig {
  int engine = 0;
  std::vector<Knob> knobs;
  uint32_t numerical_notes = 0;  // bit i: cudnnBackendNumericalNote_t i
  uint32_t behavior_notes = 0;   // bit i: cudnnBackendBehaviorNote_t i
  BackendDescriptor descriptor;
  // ConvOpGraph::Configs: the first mode that offered it, and its place in
  // that mode's list (1 = first). 0: not from Configs.
  HeuristicMode mode = HeuristicMode::kA;
  int rank = 0;
};

// The operation graph of one problem (which must be a graph-API problem:
// its alignment is the tensors' byte alignment), bound to `handle`.
class ConvOpGraph {
 public:
  // INVALID_ARGUMENT for an invalid problem; cuDNN's refusal of the graph
  // (NOT_SUPPORTED, BAD_PARAM) as cudnn_status.h maps it.
  static absl::StatusOr<ConvOpGraph> Create(const ConvProblem& problem,
                                            cudnnHandle_t handle);

  const ConvProblem& problem() const { return problem_; }
  cudnnHandle_t handle() const { return handle_; }
  cudnnBackendDescriptor_t get() const { return graph_.get(); }

  // The configs of `modes`, in order, without repeats (same engine and
  // knobs). A mode that fails or offers nothing adds nothing.
  absl::StatusOr<std::vector<EngineConfig>> Configs(
      const std::vector<HeuristicMode>& modes) const;

  // The finalized engine config of engine `engine` with `knobs` (knobs not
  // given keep the engine's defaults). NOT_SUPPORTED-style errors when the
  // engine or a knob does not apply to this graph.
  absl::StatusOr<EngineConfig> ConfigFor(int engine,
                                         const std::vector<Knob>& knobs) const;

  // A finalized execution plan of `config`.
  absl::StatusOr<BackendDescriptor> BuildPlan(
      cudnnBackendDescriptor_t config) const;

 private:
  ConvOpGraph() = default;
  ConvProblem problem_;
  cudnnHandle_t handle_ = nullptr;
  // The graph keeps what it was built from alive.
  std::vector<BackendDescriptor> parts_;
  BackendDescriptor graph_;
};

// The finalized engine config of engine `engine` with `knobs` on any
// finalized operation graph (a caller's own, too).
absl::StatusOr<EngineConfig> EngineConfigFor(cudnnBackendDescriptor_t op_graph,
                                             int engine,
                                             const std::vector<Knob>& knobs);
// Finalizes the caller's new (unfinalized) CUDNN_BACKEND_ENGINECFG_DESCRIPTOR
// `config` as engine `engine` with `knobs` on the finalized `op_graph`.
absl::Status FillEngineConfig(cudnnBackendDescriptor_t config,
                              cudnnBackendDescriptor_t op_graph, int engine,
                              const std::vector<Knob>& knobs);
// Every config a finalized CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR offers, in
// its order, described (configs cuDNN cannot describe are left out).
absl::StatusOr<std::vector<EngineConfig>> HeuristicResults(
    cudnnBackendDescriptor_t heuristics);
// A finalized execution plan of a finalized engine config.
absl::StatusOr<BackendDescriptor> BuildPlanFor(cudnnHandle_t handle,
                                               cudnnBackendDescriptor_t config);

// A plan loaded from its serialized form on `handle`. cuDNN refuses a blob
// made by another cuDNN version, schema, SM count or driver
// (FAILED_PRECONDITION / INVALID_ARGUMENT, with its message); it does not
// check the problem, so callers match the key first.
absl::StatusOr<BackendDescriptor> LoadPlan(cudnnHandle_t handle,
                                           const std::string& json);
// The serialized form of a finalized plan.
absl::StatusOr<std::string> SerializePlan(cudnnBackendDescriptor_t plan);
// The workspace a finalized plan needs, bytes.
absl::StatusOr<int64_t> PlanWorkspaceBytes(cudnnBackendDescriptor_t plan);

// Operand device pointers in forward terms, and a workspace.
struct GraphBuffers {
  void* x = nullptr;
  void* w = nullptr;
  void* y = nullptr;
  void* workspace = nullptr;
};

// A finalized variant pack binding `buffers` to kUidX, kUidW, kUidY.
absl::StatusOr<BackendDescriptor> MakeVariantPack(const GraphBuffers& buffers);

// cudnnBackendExecute of `plan` with `variant_pack` on the handle's stream.
absl::Status ExecutePlan(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                         cudnnBackendDescriptor_t variant_pack);

}  // namespace tunedb

#endif  // TUNEDB_CUDNN_BACKEND_GRAPH_H_
