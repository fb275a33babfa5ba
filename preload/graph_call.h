// GraphCall: one intercepted read of an engine-heuristics descriptor's
// results (cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS)),
// as the shim (graph_exports.cc) hands it to the Interposer, with what the
// program set on the descriptors behind it (the shadow types below, recorded
// by GraphShadow, because cuDNN 9 cannot read an operation graph's nodes or
// a tensor's byte alignment back).
//
// Thread safety: plain values.
#ifndef TUNEDB_PRELOAD_GRAPH_CALL_H_
#define TUNEDB_PRELOAD_GRAPH_CALL_H_

#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tunedb::preload {

// A CUDNN_BACKEND_TENSOR_DESCRIPTOR's attributes; unset ones keep these.
struct ShadowTensor {
  int data_type = -1;  // cudnnDataType_t
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;
  int64_t alignment = 0;  // CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT
  bool is_virtual = false;
  int64_t vector_count = 1;
  int64_t uid = -1;  // CUDNN_ATTR_TENSOR_UNIQUE_ID
};

// A CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR's attributes.
struct ShadowConvolution {
  int compute_type = -1;  // cudnnDataType_t
  int mode = CUDNN_CROSS_CORRELATION;
  int64_t spatial_dims = 0;
  std::vector<int64_t> pre_padding;
  std::vector<int64_t> post_padding;
  std::vector<int64_t> stride;
  std::vector<int64_t> dilation;
};

// One node of an operation graph: a convolution of one pass with its
// operands in forward terms (x is dx for backward data, w is dw for
// backward filter), or any other node (kOther).
struct ShadowNode {
  enum Kind { kOther, kForward, kBackwardData, kBackwardFilter };
  Kind kind = kOther;
  bool has_x = false, has_w = false, has_y = false, has_conv = false;
  ShadowTensor x, w, y;
  ShadowConvolution conv;
};

// A CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR's graph and mode.
struct ShadowHeuristics {
  bool has_graph = false;
  std::vector<ShadowNode> nodes;  // the graph's CUDNN_ATTR_OPERATIONGRAPH_OPS
  int mode = -1;                  // cudnnBackendHeurMode_t
  // The operation graph descriptor set on it, and whether an earlier
  // answer for that same (live) graph gave a config every filter keeps
  // (GraphAnswer::universal).
  cudnnBackendDescriptor_t graph = nullptr;
  bool graph_answered = false;
  // The handle set on that graph (CUDNN_ATTR_OPERATIONGRAPH_HANDLE), if
  // seen: stored plans are checked with it.
  cudnnHandle_t graph_handle = nullptr;
};

struct GraphCall {
  cudnnBackendDescriptor_t heuristics = nullptr;
  ShadowHeuristics shadow;
  // The caller's arguments: a count query has requested 0 (elements may be
  // null); a fill query gives `requested` new ENGINECFG descriptors.
  int64_t requested = 0;
  int64_t* count = nullptr;
  void* elements = nullptr;
};

// What the Interposer did: answered (the call returns `status`), or not
// (the shim calls cuDNN with the caller's arguments). `universal`: the
// configs it filled include one that PyTorch's filters keep whatever the
// caller's settings (deterministic, no DOWN_CONVERT_INPUTS, in fp32 without
// tensor cores) and that needs no workspace: the shim then marks the graph
// answered, and a fallback-list query on it gets no configs. `lead_only`
// (only with `universal`): once one plan of the filled configs has built,
// the others need not be, while the GPU has room for it: the shim
// marks them as one offer (GraphShadow::MarkOffer, plan_exports.cc). Only
// when every filled config is tunedb's (PreloadOptions::lead_plan_only).
//
// `plans`, when not empty, holds one entry per filled config, in order:
// the stored serialized plan of that config, whole, for this key and
// renumbered for the caller's tensor ids (null where none is stored). A
// plan of that config then loads it instead of compiling (plan_exports.cc).
struct GraphAnswer {
  bool answered = false;
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  bool universal = false;
  bool lead_only = false;
  std::vector<std::shared_ptr<const std::string>> plans;
  // Under a pin or a job (TUNEDB_PIN, TUNEDB_JOB), answered or not: the
  // configs the caller gets join its graph's one offer
  // (GraphShadow::MarkGraphOffer), so of all the lists it asks for that
  // graph, a caller that builds and times every config it keeps builds
  // only the first it keeps: the same in every process, whatever its
  // filters, and never chosen by timing.
  bool one_offer = false;
};

}  // namespace tunedb::preload

#endif  // TUNEDB_PRELOAD_GRAPH_CALL_H_
