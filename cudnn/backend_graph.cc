#include "cudnn/backend_graph.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/data_type_traits.h"
#include "common/status_macros.h"
#include "cudnn/conv_operands.h"
#include "cudnn/cudnn_status.h"
#include "cudnn/plan_blob.h"
#include "tunedb/cudnn_types.h"

namespace tunedb {
namespace {

absl::Status Set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                 cudnnBackendAttributeType_t type, int64_t count,
                 const void* values, const char* what) {
  return CudnnStatusToAbsl(
      cudnnBackendSetAttribute(d, name, type, count, values), what);
}

absl::Status Finalize(cudnnBackendDescriptor_t d, const char* what) {
  return CudnnStatusToAbsl(cudnnBackendFinalize(d), what);
}

// Handles on graphs and plans are deprecated in cuDNN 9.19 (the current
// device is used) but still read by older 9.x releases: set where accepted.
void SetHandle(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
               cudnnHandle_t handle) {
  cudnnBackendSetAttribute(d, name, CUDNN_TYPE_HANDLE, 1, &handle);
}

// Per-pass attribute names of the convolution node, in forward terms.
struct PassNode {
  cudnnBackendDescriptorType_t type;
  cudnnBackendAttributeName_t x, w, y, conv, alpha, beta;
};

PassNode NodeOf(ConvOp op) {
  switch (op) {
    case ConvOp::kBackwardData:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA};
    case ConvOp::kBackwardFilter:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA};
    case ConvOp::kForward:
      break;
  }
  return {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
          CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
          CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
          CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
          CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
          CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
          CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA};
}

absl::StatusOr<BackendDescriptor> MakeTensor(const ConvProblem& p,
                                             ConvOperand operand,
                                             int64_t uid) {
  ASSIGN_OR_RETURN(BackendDescriptor t,
                   CreateBackendDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR));
  const std::vector<int64_t> dims = OperandDims(p, operand);
  const std::vector<int64_t> strides =
      PackedStrides(dims, IsChannelsLast(p.layout));
  const cudnnDataType_t type = ToCudnn(p.input_type);
  const int64_t alignment = p.alignment;
  const int64_t n = static_cast<int64_t>(dims.size());
  RETURN_IF_ERROR(Set(t.get(), CUDNN_ATTR_TENSOR_DATA_TYPE,
                      CUDNN_TYPE_DATA_TYPE, 1, &type, "tensor data type"));
  RETURN_IF_ERROR(Set(t.get(), CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64,
                      n, dims.data(), "tensor dimensions"));
  RETURN_IF_ERROR(Set(t.get(), CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, n,
                      strides.data(), "tensor strides"));
  RETURN_IF_ERROR(Set(t.get(), CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64,
                      1, &uid, "tensor unique id"));
  RETURN_IF_ERROR(Set(t.get(), CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT,
                      CUDNN_TYPE_INT64, 1, &alignment,
                      "tensor byte alignment"));
  RETURN_IF_ERROR(Finalize(t.get(), "finalize tensor"));
  return t;
}

absl::StatusOr<BackendDescriptor> MakeConvolution(const ConvProblem& p) {
  ASSIGN_OR_RETURN(
      BackendDescriptor c,
      CreateBackendDescriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR));
  const int64_t dims = p.spatial_dims;
  const cudnnDataType_t compute = ToCudnn(p.compute_type);
  const cudnnConvolutionMode_t mode = p.mode == ConvMode::kConvolution
                                          ? CUDNN_CONVOLUTION
                                          : CUDNN_CROSS_CORRELATION;
  auto spatial = [&](const ConvProblem::Dims& d) {
    return std::vector<int64_t>(d.begin(), d.begin() + dims);
  };
  const std::vector<int64_t> pad = spatial(p.padding);
  const std::vector<int64_t> stride = spatial(p.stride);
  const std::vector<int64_t> dilation = spatial(p.dilation);
  RETURN_IF_ERROR(Set(c.get(), CUDNN_ATTR_CONVOLUTION_COMP_TYPE,
                      CUDNN_TYPE_DATA_TYPE, 1, &compute, "conv compute type"));
  RETURN_IF_ERROR(Set(c.get(), CUDNN_ATTR_CONVOLUTION_CONV_MODE,
                      CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode, "conv mode"));
  RETURN_IF_ERROR(Set(c.get(), CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS,
                      CUDNN_TYPE_INT64, 1, &dims, "conv spatial dims"));
  RETURN_IF_ERROR(Set(c.get(), CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS,
                      CUDNN_TYPE_INT64, dims, pad.data(), "conv pre-padding"));
  RETURN_IF_ERROR(Set(c.get(), CUDNN_ATTR_CONVOLUTION_POST_PADDINGS,
                      CUDNN_TYPE_INT64, dims, pad.data(), "conv post-padding"));
  RETURN_IF_ERROR(Set(c.get(), CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES,
                      CUDNN_TYPE_INT64, dims, stride.data(), "conv strides"));
  RETURN_IF_ERROR(Set(c.get(), CUDNN_ATTR_CONVOLUTION_DILATIONS,
                      CUDNN_TYPE_INT64, dims, dilation.data(),
                      "conv dilations"));
  RETURN_IF_ERROR(Finalize(c.get(), "finalize convolution"));
  return c;
}

cudnnBackendHeurMode_t ToCudnn(HeuristicMode m) {
  switch (m) {
    case HeuristicMode::kInstant:
      return CUDNN_HEUR_MODE_INSTANT;
    case HeuristicMode::kB:
      return CUDNN_HEUR_MODE_B;
    case HeuristicMode::kFallback:
      return CUDNN_HEUR_MODE_FALLBACK;
    case HeuristicMode::kA:
      break;
  }
  return CUDNN_HEUR_MODE_A;
}

// `n` new descriptors of `type`: owned in `owned`, their handles in `raw`
// (for cudnnBackendGetAttribute to fill, or to set as an array).
absl::Status CreateDescriptors(cudnnBackendDescriptorType_t type, int64_t n,
                               std::vector<BackendDescriptor>& owned,
                               std::vector<cudnnBackendDescriptor_t>& raw) {
  for (int64_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(BackendDescriptor d, CreateBackendDescriptor(type));
    raw.push_back(d.get());
    owned.push_back(std::move(d));
  }
  return absl::OkStatus();
}

// Bits of the notes of type `type` that `attr` of `d` lists.
template <typename Note>
uint32_t NoteBits(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t attr,
                  cudnnBackendAttributeType_t type) {
  Note notes[32];
  int64_t count = 0;
  if (cudnnBackendGetAttribute(d, attr, type, 32, &count, notes) !=
      CUDNN_STATUS_SUCCESS) {
    return 0;
  }
  uint32_t bits = 0;
  for (int64_t i = 0; i < std::min<int64_t>(count, 32); ++i) {
    const int note = static_cast<int>(notes[i]);
    if (note >= 0 && note < 32) bits |= uint32_t{1} << note;
  }
  return bits;
}

// Engine id, notes and knobs of a finalized engine config.
absl::Status Describe(EngineConfig& config) {
  ASSIGN_OR_RETURN(BackendDescriptor engine,
                   CreateBackendDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR));
  cudnnBackendDescriptor_t raw_engine = engine.get();
  int64_t count = 0;
  RETURN_IF_ERROR(CudnnStatusToAbsl(
      cudnnBackendGetAttribute(config.descriptor.get(),
                               CUDNN_ATTR_ENGINECFG_ENGINE,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count,
                               &raw_engine),
      "engine config's engine"));
  int64_t index = 0;
  RETURN_IF_ERROR(CudnnStatusToAbsl(
      cudnnBackendGetAttribute(raw_engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
                               CUDNN_TYPE_INT64, 1, &count, &index),
      "engine global index"));
  config.engine = static_cast<int>(index);
  config.numerical_notes = NoteBits<cudnnBackendNumericalNote_t>(
      raw_engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE);
  config.behavior_notes = NoteBits<cudnnBackendBehaviorNote_t>(
      raw_engine, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE);

  constexpr int kMaxKnobs = CUDNN_KNOB_TYPE_COUNTS;
  std::vector<BackendDescriptor> owned;
  std::vector<cudnnBackendDescriptor_t> choices;
  RETURN_IF_ERROR(CreateDescriptors(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR,
                                    kMaxKnobs, owned, choices));
  int64_t knob_count = 0;
  RETURN_IF_ERROR(CudnnStatusToAbsl(
      cudnnBackendGetAttribute(
          config.descriptor.get(), CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
          CUDNN_TYPE_BACKEND_DESCRIPTOR, kMaxKnobs, &knob_count,
          choices.data()),
      "engine config's knob choices"));
  config.knobs.clear();
  for (int64_t i = 0; i < std::min<int64_t>(knob_count, kMaxKnobs); ++i) {
    cudnnBackendKnobType_t type{};
    int64_t value = 0;
    RETURN_IF_ERROR(CudnnStatusToAbsl(
        cudnnBackendGetAttribute(choices[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                 CUDNN_TYPE_KNOB_TYPE, 1, &count, &type),
        "knob type"));
    RETURN_IF_ERROR(CudnnStatusToAbsl(
        cudnnBackendGetAttribute(choices[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                                 CUDNN_TYPE_INT64, 1, &count, &value),
        "knob value"));
    config.knobs.push_back(Knob{static_cast<int>(type), value});
  }
  std::sort(config.knobs.begin(), config.knobs.end(),
            [](const Knob& a, const Knob& b) { return a.type < b.type; });
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BackendDescriptor> CreateBackendDescriptor(
    cudnnBackendDescriptorType_t type) {
  cudnnBackendDescriptor_t raw = nullptr;
  RETURN_IF_ERROR(CudnnStatusToAbsl(cudnnBackendCreateDescriptor(type, &raw),
                                    "cudnnBackendCreateDescriptor"));
  return BackendDescriptor(raw);
}

absl::StatusOr<ConvOpGraph> ConvOpGraph::Create(const ConvProblem& p,
                                                cudnnHandle_t handle) {
  RETURN_IF_ERROR(p.Validate());
  if (p.api != ConvApi::kGraph) {
    return absl::InvalidArgumentError(
        "the problem is not a graph-API problem (api=graph)");
  }
  ConvOpGraph g;
  g.problem_ = p;
  g.handle_ = handle;
  ASSIGN_OR_RETURN(BackendDescriptor x, MakeTensor(p, ConvOperand::kX, kUidX));
  ASSIGN_OR_RETURN(BackendDescriptor w, MakeTensor(p, ConvOperand::kW, kUidW));
  ASSIGN_OR_RETURN(BackendDescriptor y, MakeTensor(p, ConvOperand::kY, kUidY));
  ASSIGN_OR_RETURN(BackendDescriptor conv, MakeConvolution(p));
  const PassNode node = NodeOf(p.op);
  ASSIGN_OR_RETURN(BackendDescriptor op, CreateBackendDescriptor(node.type));
  cudnnBackendDescriptor_t raw[] = {x.get(), w.get(), y.get(), conv.get()};
  RETURN_IF_ERROR(Set(op.get(), node.x, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                      &raw[0], "conv node x"));
  RETURN_IF_ERROR(Set(op.get(), node.w, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                      &raw[1], "conv node w"));
  RETURN_IF_ERROR(Set(op.get(), node.y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                      &raw[2], "conv node y"));
  RETURN_IF_ERROR(Set(op.get(), node.conv, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                      &raw[3], "conv node descriptor"));
  if (DataTypeTraitsOf(p.input_type).double_scaling) {
    const double alpha = 1, beta = 0;
    RETURN_IF_ERROR(Set(op.get(), node.alpha, CUDNN_TYPE_DOUBLE, 1, &alpha,
                        "conv node alpha"));
    RETURN_IF_ERROR(Set(op.get(), node.beta, CUDNN_TYPE_DOUBLE, 1, &beta,
                        "conv node beta"));
  } else {
    const float alpha = 1, beta = 0;
    RETURN_IF_ERROR(Set(op.get(), node.alpha, CUDNN_TYPE_FLOAT, 1, &alpha,
                        "conv node alpha"));
    RETURN_IF_ERROR(Set(op.get(), node.beta, CUDNN_TYPE_FLOAT, 1, &beta,
                        "conv node beta"));
  }
  RETURN_IF_ERROR(Finalize(op.get(), "finalize conv node"));
  ASSIGN_OR_RETURN(
      g.graph_, CreateBackendDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR));
  cudnnBackendDescriptor_t raw_op = op.get();
  RETURN_IF_ERROR(Set(g.graph_.get(), CUDNN_ATTR_OPERATIONGRAPH_OPS,
                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw_op,
                      "operation graph ops"));
  SetHandle(g.graph_.get(), CUDNN_ATTR_OPERATIONGRAPH_HANDLE, handle);
  RETURN_IF_ERROR(Finalize(g.graph_.get(), "finalize operation graph"));
  for (BackendDescriptor* part : {&x, &w, &y, &conv, &op}) {
    g.parts_.push_back(std::move(*part));
  }
  return g;
}

absl::StatusOr<std::vector<EngineConfig>> ConvOpGraph::Configs(
    const std::vector<HeuristicMode>& modes) const {
  std::vector<EngineConfig> out;
  for (HeuristicMode mode : modes) {
    absl::StatusOr<BackendDescriptor> heur =
        CreateBackendDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    if (!heur.ok()) return heur.status();
    cudnnBackendDescriptor_t raw_graph = graph_.get();
    const cudnnBackendHeurMode_t m = ToCudnn(mode);
    RETURN_IF_ERROR(Set(heur->get(), CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                        CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw_graph,
                        "heuristic graph"));
    RETURN_IF_ERROR(Set(heur->get(), CUDNN_ATTR_ENGINEHEUR_MODE,
                        CUDNN_TYPE_HEUR_MODE, 1, &m, "heuristic mode"));
    if (cudnnBackendFinalize(heur->get()) != CUDNN_STATUS_SUCCESS) continue;
    absl::StatusOr<std::vector<EngineConfig>> configs =
        HeuristicResults(heur->get());
    if (!configs.ok()) continue;  // a mode that fails offers nothing
    int rank = 0;
    for (EngineConfig& config : *configs) {
      config.mode = mode;
      config.rank = ++rank;
      const bool seen =
          std::any_of(out.begin(), out.end(), [&](const EngineConfig& c) {
            return c.engine == config.engine && c.knobs == config.knobs;
          });
      if (!seen) out.push_back(std::move(config));
    }
  }
  return out;
}

absl::StatusOr<std::vector<EngineConfig>> HeuristicResults(
    cudnnBackendDescriptor_t heuristics) {
  int64_t count = 0;
  RETURN_IF_ERROR(CudnnStatusToAbsl(
      cudnnBackendGetAttribute(heuristics, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                               nullptr),
      "heuristic result count"));
  std::vector<EngineConfig> out;
  if (count <= 0) return out;
  std::vector<BackendDescriptor> owned;
  std::vector<cudnnBackendDescriptor_t> raw;
  RETURN_IF_ERROR(CreateDescriptors(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, count,
                                    owned, raw));
  int64_t returned = 0;
  RETURN_IF_ERROR(CudnnStatusToAbsl(
      cudnnBackendGetAttribute(heuristics, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &returned,
                               raw.data()),
      "heuristic results"));
  for (int64_t i = 0; i < std::min(returned, count); ++i) {
    EngineConfig config;
    config.descriptor = std::move(owned[i]);
    if (Describe(config).ok()) out.push_back(std::move(config));
  }
  return out;
}

absl::StatusOr<EngineConfig> ConvOpGraph::ConfigFor(
    int engine_id, const std::vector<Knob>& knobs) const {
  return EngineConfigFor(graph_.get(), engine_id, knobs);
}

absl::Status FillEngineConfig(cudnnBackendDescriptor_t config,
                              cudnnBackendDescriptor_t op_graph, int engine_id,
                              const std::vector<Knob>& knobs) {
  // cuDNN copies descriptors set as attributes: the engine and the knob
  // choices may go when the config is finalized.
  ASSIGN_OR_RETURN(BackendDescriptor engine,
                   CreateBackendDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR));
  cudnnBackendDescriptor_t raw_graph = op_graph;
  const int64_t index = engine_id;
  RETURN_IF_ERROR(Set(engine.get(), CUDNN_ATTR_ENGINE_OPERATION_GRAPH,
                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw_graph,
                      "engine graph"));
  RETURN_IF_ERROR(Set(engine.get(), CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
                      CUDNN_TYPE_INT64, 1, &index, "engine global index"));
  RETURN_IF_ERROR(Finalize(engine.get(), "finalize engine"));
  std::vector<BackendDescriptor> owned;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (const Knob& k : knobs) {
    ASSIGN_OR_RETURN(
        BackendDescriptor c,
        CreateBackendDescriptor(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR));
    const auto type = static_cast<cudnnBackendKnobType_t>(k.type);
    RETURN_IF_ERROR(Set(c.get(), CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                        CUDNN_TYPE_KNOB_TYPE, 1, &type, "knob type"));
    RETURN_IF_ERROR(Set(c.get(), CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                        CUDNN_TYPE_INT64, 1, &k.value, "knob value"));
    RETURN_IF_ERROR(Finalize(c.get(), "finalize knob choice"));
    raw.push_back(c.get());
    owned.push_back(std::move(c));
  }
  cudnnBackendDescriptor_t raw_engine = engine.get();
  RETURN_IF_ERROR(Set(config, CUDNN_ATTR_ENGINECFG_ENGINE,
                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw_engine,
                      "engine config engine"));
  if (!raw.empty()) {
    RETURN_IF_ERROR(Set(config, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                        CUDNN_TYPE_BACKEND_DESCRIPTOR,
                        static_cast<int64_t>(raw.size()), raw.data(),
                        "engine config knobs"));
  }
  return Finalize(config, "finalize engine config");
}

absl::StatusOr<EngineConfig> EngineConfigFor(cudnnBackendDescriptor_t op_graph,
                                             int engine_id,
                                             const std::vector<Knob>& knobs) {
  EngineConfig config;
  ASSIGN_OR_RETURN(config.descriptor,
                   CreateBackendDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
  RETURN_IF_ERROR(
      FillEngineConfig(config.descriptor.get(), op_graph, engine_id, knobs));
  RETURN_IF_ERROR(Describe(config));
  return config;
}

absl::StatusOr<BackendDescriptor> ConvOpGraph::BuildPlan(
    cudnnBackendDescriptor_t config) const {
  return BuildPlanFor(handle_, config);
}

absl::StatusOr<BackendDescriptor> BuildPlanFor(
    cudnnHandle_t handle, cudnnBackendDescriptor_t config) {
  ASSIGN_OR_RETURN(
      BackendDescriptor plan,
      CreateBackendDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR));
  SetHandle(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_HANDLE, handle);
  RETURN_IF_ERROR(Set(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &config,
                      "plan engine config"));
  RETURN_IF_ERROR(Finalize(plan.get(), "finalize execution plan"));
  return plan;
}

absl::StatusOr<BackendDescriptor> LoadPlan(cudnnHandle_t handle,
                                           const std::string& json) {
  if (json.empty()) return absl::InvalidArgumentError("empty plan");
  RETURN_IF_ERROR(CheckLoadable(json));
  ASSIGN_OR_RETURN(
      BackendDescriptor plan,
      CreateBackendDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR));
  SetHandle(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_HANDLE, handle);
  absl::Status s =
      Set(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION,
          CUDNN_TYPE_CHAR, static_cast<int64_t>(json.size()), json.data(),
          "load serialized plan");
  if (s.ok()) s = Finalize(plan.get(), "finalize loaded plan");
  if (!s.ok()) {
    // cuDNN says why it refuses a blob (another version, SM count, ...).
    char why[512] = {};
    cudnnGetLastErrorString(why, sizeof(why));
    return absl::Status(s.code(), absl::StrCat(s.message(), ": ", why));
  }
  return plan;
}

absl::StatusOr<std::string> SerializePlan(cudnnBackendDescriptor_t plan) {
  int64_t count = 0;
  RETURN_IF_ERROR(CudnnStatusToAbsl(
      cudnnBackendGetAttribute(plan,
                               CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION,
                               CUDNN_TYPE_CHAR, 0, &count, nullptr),
      "serialized plan size"));
  std::string json(static_cast<size_t>(std::max<int64_t>(count, 0)), '\0');
  RETURN_IF_ERROR(CudnnStatusToAbsl(
      cudnnBackendGetAttribute(plan,
                               CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION,
                               CUDNN_TYPE_CHAR, count, &count, json.data()),
      "serialize plan"));
  // The count includes the terminating NUL.
  while (!json.empty() && json.back() == '\0') json.pop_back();
  return json;
}

absl::StatusOr<int64_t> PlanWorkspaceBytes(cudnnBackendDescriptor_t plan) {
  int64_t bytes = 0, count = 0;
  RETURN_IF_ERROR(CudnnStatusToAbsl(
      cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                               CUDNN_TYPE_INT64, 1, &count, &bytes),
      "plan workspace size"));
  return bytes;
}

absl::StatusOr<BackendDescriptor> MakeVariantPack(const GraphBuffers& b) {
  ASSIGN_OR_RETURN(
      BackendDescriptor pack,
      CreateBackendDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR));
  const int64_t uids[] = {kUidX, kUidW, kUidY};
  void* pointers[] = {b.x, b.w, b.y};
  void* workspace = b.workspace;
  RETURN_IF_ERROR(Set(pack.get(), CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                      CUDNN_TYPE_INT64, 3, uids, "variant pack ids"));
  RETURN_IF_ERROR(Set(pack.get(), CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                      CUDNN_TYPE_VOID_PTR, 3, pointers,
                      "variant pack pointers"));
  RETURN_IF_ERROR(Set(pack.get(), CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
                      CUDNN_TYPE_VOID_PTR, 1, &workspace,
                      "variant pack workspace"));
  RETURN_IF_ERROR(Finalize(pack.get(), "finalize variant pack"));
  return pack;
}

absl::Status ExecutePlan(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                         cudnnBackendDescriptor_t variant_pack) {
  return CudnnStatusToAbsl(cudnnBackendExecute(handle, plan, variant_pack),
                           "cudnnBackendExecute");
}

}  // namespace tunedb
