#include "preload/graph_shadow.h"

#include <utility>
#include <vector>

namespace tunedb::preload {
namespace {

using Attribute = GraphShadow::Attribute;

std::vector<int64_t> Int64s(const Attribute& a) {
  if (a.type != CUDNN_TYPE_INT64 || a.count < 0 || a.count > 16) return {};
  const auto* v = static_cast<const int64_t*>(a.values);
  return std::vector<int64_t>(v, v + a.count);
}

template <typename T>
bool One(const Attribute& a, cudnnBackendAttributeType_t want, T* out) {
  if (a.type != want || a.count != 1) return false;
  *out = *static_cast<const T*>(a.values);
  return true;
}

// The one descriptor a descriptor-valued attribute sets, or nullopt.
std::optional<cudnnBackendDescriptor_t> OneDescriptor(const Attribute& a) {
  if (a.type != CUDNN_TYPE_BACKEND_DESCRIPTOR || a.count != 1) {
    return std::nullopt;
  }
  return *static_cast<const cudnnBackendDescriptor_t*>(a.values);
}

// Which operand of which pass a node attribute sets.
struct NodeSlot {
  ShadowNode::Kind kind;
  char operand;  // 'x', 'w', 'y' in forward terms, or 'c' (convolution)
};

std::optional<NodeSlot> SlotOf(cudnnBackendAttributeName_t name) {
  switch (name) {
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X:
      return NodeSlot{ShadowNode::kForward, 'x'};
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W:
      return NodeSlot{ShadowNode::kForward, 'w'};
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y:
      return NodeSlot{ShadowNode::kForward, 'y'};
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC:
      return NodeSlot{ShadowNode::kForward, 'c'};
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX:
      return NodeSlot{ShadowNode::kBackwardData, 'x'};
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W:
      return NodeSlot{ShadowNode::kBackwardData, 'w'};
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY:
      return NodeSlot{ShadowNode::kBackwardData, 'y'};
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC:
      return NodeSlot{ShadowNode::kBackwardData, 'c'};
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X:
      return NodeSlot{ShadowNode::kBackwardFilter, 'x'};
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW:
      return NodeSlot{ShadowNode::kBackwardFilter, 'w'};
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY:
      return NodeSlot{ShadowNode::kBackwardFilter, 'y'};
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC:
      return NodeSlot{ShadowNode::kBackwardFilter, 'c'};
    default:
      return std::nullopt;
  }
}

}  // namespace

GraphShadow& GraphShadow::Instance() {
  // Never destroyed: cuDNN calls may come while the process exits.
  static GraphShadow* const shadow = new GraphShadow();
  return *shadow;
}

bool GraphShadow::Records(cudnnBackendAttributeName_t name) {
  switch (name) {
    case CUDNN_ATTR_TENSOR_DATA_TYPE:
    case CUDNN_ATTR_TENSOR_DIMENSIONS:
    case CUDNN_ATTR_TENSOR_STRIDES:
    case CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT:
    case CUDNN_ATTR_TENSOR_IS_VIRTUAL:
    case CUDNN_ATTR_TENSOR_VECTOR_COUNT:
    case CUDNN_ATTR_TENSOR_UNIQUE_ID:
    case CUDNN_ATTR_CONVOLUTION_COMP_TYPE:
    case CUDNN_ATTR_CONVOLUTION_CONV_MODE:
    case CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS:
    case CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS:
    case CUDNN_ATTR_CONVOLUTION_POST_PADDINGS:
    case CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES:
    case CUDNN_ATTR_CONVOLUTION_DILATIONS:
    case CUDNN_ATTR_OPERATIONGRAPH_OPS:
    case CUDNN_ATTR_OPERATIONGRAPH_HANDLE:
    case CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH:
    case CUDNN_ATTR_ENGINEHEUR_MODE:
      return true;
    default:
      return SlotOf(name).has_value();
  }
}

GraphShadow::Entry& GraphShadow::EntryOf(cudnnBackendDescriptor_t d,
                                         Entry::Kind kind) {
  if (entries_.size() >= kMaxEntries && entries_.count(d) == 0) {
    entries_.clear();
  }
  Entry& e = entries_[d];
  recorded_.store(true, std::memory_order_release);
  if (e.kind != kind) {
    e = Entry();
    e.kind = kind;
  }
  return e;
}

void GraphShadow::RecordAttribute(cudnnBackendDescriptor_t d,
                                  cudnnBackendAttributeName_t name,
                                  cudnnBackendAttributeType_t type,
                                  int64_t count, const void* values) {
  if (d == nullptr || values == nullptr || !Records(name)) return;
  const Attribute a{name, type, count, values};
  ShimMutexLock lock(&mu_);
  if (RecordTensor(d, a) || RecordConvolution(d, a)) return;
  switch (name) {
    case CUDNN_ATTR_OPERATIONGRAPH_OPS:
      return RecordGraphNodes(d, a);
    case CUDNN_ATTR_OPERATIONGRAPH_HANDLE: {
      cudnnHandle_t h = nullptr;
      if (One(a, CUDNN_TYPE_HANDLE, &h)) {
        EntryOf(d, Entry::kGraph).heur.graph_handle = h;
      }
      return;
    }
    case CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH:
      return RecordHeuristicsGraph(d, a);
    case CUDNN_ATTR_ENGINEHEUR_MODE: {
      cudnnBackendHeurMode_t m;
      if (One(a, CUDNN_TYPE_HEUR_MODE, &m)) {
        EntryOf(d, Entry::kHeuristics).heur.mode = static_cast<int>(m);
      }
      return;
    }
    default:
      return RecordNodeOperand(d, a);
  }
}

bool GraphShadow::RecordTensor(cudnnBackendDescriptor_t d, const Attribute& a) {
  switch (a.name) {
    case CUDNN_ATTR_TENSOR_DATA_TYPE: {
      cudnnDataType_t t;
      if (One(a, CUDNN_TYPE_DATA_TYPE, &t)) {
        EntryOf(d, Entry::kTensor).tensor.data_type = static_cast<int>(t);
      }
      return true;
    }
    case CUDNN_ATTR_TENSOR_DIMENSIONS:
      EntryOf(d, Entry::kTensor).tensor.dims = Int64s(a);
      return true;
    case CUDNN_ATTR_TENSOR_STRIDES:
      EntryOf(d, Entry::kTensor).tensor.strides = Int64s(a);
      return true;
    case CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT:
      One(a, CUDNN_TYPE_INT64, &EntryOf(d, Entry::kTensor).tensor.alignment);
      return true;
    case CUDNN_ATTR_TENSOR_IS_VIRTUAL:
      One(a, CUDNN_TYPE_BOOLEAN, &EntryOf(d, Entry::kTensor).tensor.is_virtual);
      return true;
    case CUDNN_ATTR_TENSOR_VECTOR_COUNT:
      One(a, CUDNN_TYPE_INT64, &EntryOf(d, Entry::kTensor).tensor.vector_count);
      return true;
    case CUDNN_ATTR_TENSOR_UNIQUE_ID:
      One(a, CUDNN_TYPE_INT64, &EntryOf(d, Entry::kTensor).tensor.uid);
      return true;
    default:
      return false;
  }
}

bool GraphShadow::RecordConvolution(cudnnBackendDescriptor_t d,
                                    const Attribute& a) {
  switch (a.name) {
    case CUDNN_ATTR_CONVOLUTION_COMP_TYPE: {
      cudnnDataType_t t;
      if (One(a, CUDNN_TYPE_DATA_TYPE, &t)) {
        EntryOf(d, Entry::kConvolution).conv.compute_type = static_cast<int>(t);
      }
      return true;
    }
    case CUDNN_ATTR_CONVOLUTION_CONV_MODE: {
      cudnnConvolutionMode_t m;
      if (One(a, CUDNN_TYPE_CONVOLUTION_MODE, &m)) {
        EntryOf(d, Entry::kConvolution).conv.mode = static_cast<int>(m);
      }
      return true;
    }
    case CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS:
      One(a, CUDNN_TYPE_INT64,
          &EntryOf(d, Entry::kConvolution).conv.spatial_dims);
      return true;
    case CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS:
      EntryOf(d, Entry::kConvolution).conv.pre_padding = Int64s(a);
      return true;
    case CUDNN_ATTR_CONVOLUTION_POST_PADDINGS:
      EntryOf(d, Entry::kConvolution).conv.post_padding = Int64s(a);
      return true;
    case CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES:
      EntryOf(d, Entry::kConvolution).conv.stride = Int64s(a);
      return true;
    case CUDNN_ATTR_CONVOLUTION_DILATIONS:
      EntryOf(d, Entry::kConvolution).conv.dilation = Int64s(a);
      return true;
    default:
      return false;
  }
}

void GraphShadow::RecordGraphNodes(cudnnBackendDescriptor_t d,
                                   const Attribute& a) {
  if (a.type != CUDNN_TYPE_BACKEND_DESCRIPTOR || a.count < 0) return;
  const auto* ops = static_cast<const cudnnBackendDescriptor_t*>(a.values);
  std::vector<ShadowNode> nodes;
  for (int64_t i = 0; i < a.count; ++i) {
    auto it = entries_.find(ops[i]);
    nodes.push_back(it != entries_.end() && it->second.kind == Entry::kNode
                        ? it->second.node
                        : ShadowNode());
  }
  Entry& g = EntryOf(d, Entry::kGraph);
  g.heur.nodes = std::move(nodes);
  g.heur.has_graph = true;
}

void GraphShadow::RecordHeuristicsGraph(cudnnBackendDescriptor_t d,
                                        const Attribute& a) {
  const std::optional<cudnnBackendDescriptor_t> graph = OneDescriptor(a);
  if (!graph.has_value()) return;
  auto it = entries_.find(*graph);
  std::optional<std::vector<ShadowNode>> nodes;
  if (it != entries_.end() && it->second.kind == Entry::kGraph) {
    nodes = it->second.heur.nodes;
  }
  Entry& h = EntryOf(d, Entry::kHeuristics);
  h.heur.has_graph = nodes.has_value();
  h.heur.nodes = nodes.value_or(std::vector<ShadowNode>());
  h.heur.graph = *graph;
}

void GraphShadow::RecordNodeOperand(cudnnBackendDescriptor_t d,
                                    const Attribute& a) {
  const std::optional<NodeSlot> slot = SlotOf(a.name);
  const std::optional<cudnnBackendDescriptor_t> target = OneDescriptor(a);
  if (!slot || !target.has_value()) return;
  // Copies first: EntryOf may start the records over.
  auto it = entries_.find(*target);
  std::optional<ShadowTensor> tensor;
  std::optional<ShadowConvolution> conv;
  if (it != entries_.end() && it->second.kind == Entry::kTensor) {
    tensor = it->second.tensor;
  }
  if (it != entries_.end() && it->second.kind == Entry::kConvolution) {
    conv = it->second.conv;
  }
  ShadowNode& node = EntryOf(d, Entry::kNode).node;
  node.kind = slot->kind;
  switch (slot->operand) {
    case 'c':
      node.has_conv = conv.has_value();
      node.conv = conv.value_or(ShadowConvolution());
      return;
    case 'x':
      node.has_x = tensor.has_value();
      node.x = tensor.value_or(ShadowTensor());
      return;
    case 'w':
      node.has_w = tensor.has_value();
      node.w = tensor.value_or(ShadowTensor());
      return;
    default:
      node.has_y = tensor.has_value();
      node.y = tensor.value_or(ShadowTensor());
      return;
  }
}

void GraphShadow::Forget(cudnnBackendDescriptor_t d) {
  if (!recorded_.load(std::memory_order_acquire)) return;
  ShimMutexLock lock(&mu_);
  entries_.erase(d);
}

std::optional<ShadowHeuristics> GraphShadow::Heuristics(
    cudnnBackendDescriptor_t d) const {
  ShimMutexLock lock(&mu_);
  auto it = entries_.find(d);
  if (it == entries_.end() || it->second.kind != Entry::kHeuristics) {
    return std::nullopt;
  }
  ShadowHeuristics h = it->second.heur;
  auto g = entries_.find(h.graph);
  const bool graph = g != entries_.end() && g->second.kind == Entry::kGraph;
  h.graph_answered = graph && g->second.heur.graph_answered;
  h.graph_handle = graph ? g->second.heur.graph_handle : nullptr;
  return h;
}

uint64_t GraphShadow::MarkOffer(const cudnnBackendDescriptor_t* configs,
                                int64_t n) {
  ShimMutexLock lock(&mu_);
  const uint64_t offer = ++last_offer_;
  for (int64_t i = 0; configs != nullptr && i < n; ++i) {
    if (configs[i] != nullptr)
      EntryOf(configs[i], Entry::kConfig).offer = offer;
  }
  offers_marked_.store(true, std::memory_order_release);
  return offer;
}

uint64_t GraphShadow::MarkGraphOffer(cudnnBackendDescriptor_t graph,
                                     const cudnnBackendDescriptor_t* configs,
                                     int64_t n) {
  ShimMutexLock lock(&mu_);
  uint64_t offer = 0;
  auto g = entries_.find(graph);
  if (g != entries_.end() && g->second.kind == Entry::kGraph) {
    if (g->second.offer == 0) g->second.offer = ++last_offer_;
    offer = g->second.offer;
  } else {
    offer = ++last_offer_;
  }
  for (int64_t i = 0; configs != nullptr && i < n; ++i) {
    if (configs[i] != nullptr) {
      EntryOf(configs[i], Entry::kConfig).offer = offer;
    }
  }
  offers_marked_.store(true, std::memory_order_release);
  return offer;
}

void GraphShadow::MarkPlans(
    const cudnnBackendDescriptor_t* configs,
    const std::vector<std::shared_ptr<const std::string>>& plans, int64_t n,
    cudnnHandle_t handle) {
  ShimMutexLock lock(&mu_);
  bool any = false;
  for (int64_t i = 0; configs != nullptr && i < n &&
                      i < static_cast<int64_t>(plans.size());
       ++i) {
    if (configs[i] == nullptr || plans[i] == nullptr) continue;
    Entry& e = EntryOf(configs[i], Entry::kConfig);
    e.plan = plans[i];
    e.handle = handle;
    any = true;
  }
  if (any) plans_marked_.store(true, std::memory_order_release);
}

GraphShadow::ConfigMarks GraphShadow::MarksOf(
    cudnnBackendDescriptor_t config) const {
  ShimMutexLock lock(&mu_);
  auto it = entries_.find(config);
  if (it == entries_.end() || it->second.kind != Entry::kConfig) return {};
  return {it->second.offer, it->second.plan, it->second.handle};
}

void GraphShadow::PlanHandleSet(cudnnBackendDescriptor_t plan,
                                cudnnHandle_t handle) {
  ShimMutexLock lock(&mu_);
  EntryOf(plan, Entry::kPlan).held.handle = handle;
}

void GraphShadow::HoldConfig(cudnnBackendDescriptor_t plan,
                             cudnnBackendDescriptor_t config,
                             ConfigMarks marks) {
  ShimMutexLock lock(&mu_);
  HeldPlan& held = EntryOf(plan, Entry::kPlan).held;
  held.config = config;
  held.stored = std::move(marks.plan);
  held.graph_handle = marks.graph_handle;
}

std::optional<GraphShadow::HeldPlan> GraphShadow::TakeHeld(
    cudnnBackendDescriptor_t plan) {
  ShimMutexLock lock(&mu_);
  auto it = entries_.find(plan);
  if (it == entries_.end() || it->second.kind != Entry::kPlan ||
      it->second.held.config == nullptr) {
    return std::nullopt;
  }
  HeldPlan held = std::move(it->second.held);
  entries_.erase(it);
  return held;
}

void GraphShadow::MarkAnswered(cudnnBackendDescriptor_t graph) {
  ShimMutexLock lock(&mu_);
  auto it = entries_.find(graph);
  if (it != entries_.end() && it->second.kind == Entry::kGraph) {
    it->second.heur.graph_answered = true;
  }
}

}  // namespace tunedb::preload
