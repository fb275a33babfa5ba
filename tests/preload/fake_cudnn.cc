// A small stand-in for libcudnn.so.9 (same soname and version node) for the
// preload tests on machines without a GPU: handles, tensor/filter/
// convolution descriptors that store and return what was set, and the
// legacy Find/FindEx/Get_v7 calls of the three passes, which return fixed,
// known perf arrays (FakeFindList / FakeHeuristicList below) and count
// their calls (fakeCudnnCallCount). Environment knobs:
//   FAKE_CUDNN_VERSION=N     cudnnGetVersion() returns N (default 91900)
//   FAKE_CUDNN_FAIL_GET_V7=1 every Get_v7 call fails
//   (CUDNN_STATUS_INTERNAL_ERROR)
//   FAKE_CUDNN_PLAN_WORKSPACE=N an execution plan that builds needs N bytes
//   (default 0); plan builds count as "backend_plan_finalize"
// An execution plan with a serialized form set (CUDNN_ATTR_EXECUTION_PLAN_
// JSON_REPRESENTATION) loads it instead of building, as cuDNN does: never
// together with an engine config (BAD_PARAM), and only a form that holds an
// "operationGraph" and this cuDNN's version as "cudnnVersion" (else
// BAD_PARAM: "backend_plan_load_refused"); with FAKE_CUDNN_PLAN_LOADS=N,
// every form after the process's first N loads is refused too, as by a
// cuDNN that stopped taking them. A load counts as
// "backend_plan_load", and as "backend_plan_load_caller_ids" too when its
// graph names its tensors x, w and y by the ids the graph probe gives them
// ('x', 'w', 'y'). A load makes and finalizes a descriptor of its own
// through the exported functions, as cuDNN does ("backend_plan_load_inner").
// A plan without a handle does not load ("backend_plan_load_no_handle",
// BAD_PARAM; cuDNN 9.19 crashes there).
// cudnnBackendExecute runs any finalized plan ("backend_execute"), except
// that with FAKE_CUDNN_LOADED_PLANS_FAIL=1 a plan loaded from its serialized
// form fails (EXECUTION_FAILED, "backend_execute_failed"; =bad_param:
// BAD_PARAM), and with FAKE_CUDNN_BUILT_PLANS_FAIL=1 so does a built one.
//
// Thread safety: the counters are atomic; descriptors as in cuDNN.
#include <cudnn.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fake_cudnn_lists.h"
#include "nlohmann/json.hpp"

namespace {

struct Tensor {
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  int nb = 0;
  int dims[CUDNN_DIM_MAX] = {};
  int strides[CUDNN_DIM_MAX] = {};
};
struct Filter {
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  cudnnTensorFormat_t format = CUDNN_TENSOR_NCHW;
  int nb = 0;
  int dims[CUDNN_DIM_MAX] = {};
};
struct Conv {
  int n = 0;
  int pad[CUDNN_DIM_MAX] = {};
  int stride[CUDNN_DIM_MAX] = {};
  int dilation[CUDNN_DIM_MAX] = {};
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  int groups = 1;
};

template <typename T, typename Descriptor>
cudnnStatus_t Make(Descriptor* d) {
  *d = reinterpret_cast<Descriptor>(new T());
  return CUDNN_STATUS_SUCCESS;
}
template <typename T, typename Descriptor>
cudnnStatus_t Free(Descriptor d) {
  delete reinterpret_cast<T*>(d);
  return CUDNN_STATUS_SUCCESS;
}

std::mutex counts_mu;
std::map<std::string, int>& Counts() {
  static auto* counts = new std::map<std::string, int>();
  return *counts;
}
void Count(const char* name) {
  std::lock_guard<std::mutex> lock(counts_mu);
  ++Counts()[name];
}

template <typename Perf>
cudnnStatus_t Fill(const char* name, const fake_cudnn::Entry* list, int size,
                   int requested, int* returned, Perf* out) {
  Count(name);
  if (requested < 1 || returned == nullptr || out == nullptr) {
    return CUDNN_STATUS_BAD_PARAM;
  }
  const int n = std::min(size, requested);
  for (int i = 0; i < n; ++i) {
    Perf p{};
    p.algo = static_cast<decltype(p.algo)>(list[i].algo);
    p.status = list[i].status;
    p.time = list[i].time;
    p.memory = list[i].memory;
    p.determinism =
        list[i].deterministic ? CUDNN_DETERMINISTIC : CUDNN_NON_DETERMINISTIC;
    p.mathType = list[i].math;
    out[i] = p;
  }
  *returned = n;
  return CUDNN_STATUS_SUCCESS;
}

bool FailGetV7() {
  const char* v = std::getenv("FAKE_CUDNN_FAIL_GET_V7");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

}  // namespace

using fake_cudnn::kFindList;
using fake_cudnn::kHeuristicList;
using fake_cudnn::kListSize;

extern "C" {

int fakeCudnnCallCount(const char* name) {
  std::lock_guard<std::mutex> lock(counts_mu);
  auto it = Counts().find(name);
  return it == Counts().end() ? 0 : it->second;
}

size_t cudnnGetVersion(void) {
  const char* v = std::getenv("FAKE_CUDNN_VERSION");
  return v != nullptr ? std::strtoul(v, nullptr, 10) : 91900;
}

const char* cudnnGetErrorString(cudnnStatus_t status) { return "fake cudnn"; }

cudnnStatus_t cudnnCreate(cudnnHandle_t* handle) {
  *handle = reinterpret_cast<cudnnHandle_t>(new int(1));
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) {
  delete reinterpret_cast<int*>(handle);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* d) {
  return Make<Tensor>(d);
}
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d) {
  return Free<Tensor>(d);
}
cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t d,
                                         cudnnDataType_t type, int nb,
                                         const int dims[],
                                         const int strides[]) {
  if (nb < 1 || nb > CUDNN_DIM_MAX) return CUDNN_STATUS_BAD_PARAM;
  Tensor* t = reinterpret_cast<Tensor*>(d);
  t->type = type;
  t->nb = nb;
  std::copy(dims, dims + nb, t->dims);
  std::copy(strides, strides + nb, t->strides);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t d,
                                         int requested, cudnnDataType_t* type,
                                         int* nb, int dims[], int strides[]) {
  const Tensor* t = reinterpret_cast<const Tensor*>(d);
  *type = t->type;
  *nb = t->nb;
  for (int i = 0; i < std::min(requested, t->nb); ++i) {
    dims[i] = t->dims[i];
    strides[i] = t->strides[i];
  }
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* d) {
  return Make<Filter>(d);
}
cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d) {
  return Free<Filter>(d);
}
cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t d,
                                         cudnnDataType_t type,
                                         cudnnTensorFormat_t format, int nb,
                                         const int dims[]) {
  if (nb < 1 || nb > CUDNN_DIM_MAX) return CUDNN_STATUS_BAD_PARAM;
  Filter* f = reinterpret_cast<Filter*>(d);
  f->type = type;
  f->format = format;
  f->nb = nb;
  std::copy(dims, dims + nb, f->dims);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnGetFilterNdDescriptor(const cudnnFilterDescriptor_t d,
                                         int requested, cudnnDataType_t* type,
                                         cudnnTensorFormat_t* format, int* nb,
                                         int dims[]) {
  const Filter* f = reinterpret_cast<const Filter*>(d);
  *type = f->type;
  *format = f->format;
  *nb = f->nb;
  for (int i = 0; i < std::min(requested, f->nb); ++i) dims[i] = f->dims[i];
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCreateConvolutionDescriptor(
    cudnnConvolutionDescriptor_t* d) {
  return Make<Conv>(d);
}
cudnnStatus_t cudnnDestroyConvolutionDescriptor(
    cudnnConvolutionDescriptor_t d) {
  return Free<Conv>(d);
}
cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t d,
                                              int n, const int pad[],
                                              const int stride[],
                                              const int dilation[],
                                              cudnnConvolutionMode_t mode,
                                              cudnnDataType_t compute) {
  if (n < 1 || n > CUDNN_DIM_MAX - 2) return CUDNN_STATUS_BAD_PARAM;
  Conv* c = reinterpret_cast<Conv*>(d);
  c->n = n;
  std::copy(pad, pad + n, c->pad);
  std::copy(stride, stride + n, c->stride);
  std::copy(dilation, dilation + n, c->dilation);
  c->mode = mode;
  c->compute = compute;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnGetConvolutionNdDescriptor(
    const cudnnConvolutionDescriptor_t d, int requested, int* n, int pad[],
    int stride[], int dilation[], cudnnConvolutionMode_t* mode,
    cudnnDataType_t* compute) {
  const Conv* c = reinterpret_cast<const Conv*>(d);
  *n = c->n;
  for (int i = 0; i < std::min(requested, c->n); ++i) {
    pad[i] = c->pad[i];
    stride[i] = c->stride[i];
    dilation[i] = c->dilation[i];
  }
  *mode = c->mode;
  *compute = c->compute;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d,
                                          cudnnMathType_t math) {
  reinterpret_cast<Conv*>(d)->math = math;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnGetConvolutionMathType(cudnnConvolutionDescriptor_t d,
                                          cudnnMathType_t* math) {
  *math = reinterpret_cast<Conv*>(d)->math;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d,
                                            int groups) {
  reinterpret_cast<Conv*>(d)->groups = groups;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnGetConvolutionGroupCount(cudnnConvolutionDescriptor_t d,
                                            int* groups) {
  *groups = reinterpret_cast<Conv*>(d)->groups;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionNdForwardOutputDim(
    const cudnnConvolutionDescriptor_t d, const cudnnTensorDescriptor_t x,
    const cudnnFilterDescriptor_t w, int nb, int out[]) {
  const Conv* c = reinterpret_cast<const Conv*>(d);
  const Tensor* t = reinterpret_cast<const Tensor*>(x);
  const Filter* f = reinterpret_cast<const Filter*>(w);
  if (nb != t->nb || nb != f->nb || nb != c->n + 2)
    return CUDNN_STATUS_BAD_PARAM;
  out[0] = t->dims[0];
  out[1] = f->dims[0];
  for (int i = 0; i < c->n; ++i) {
    const int span = c->dilation[i] * (f->dims[2 + i] - 1) + 1;
    out[2 + i] = (t->dims[2 + i] + 2 * c->pad[i] - span) / c->stride[i] + 1;
  }
  return CUDNN_STATUS_SUCCESS;
}

namespace {
cudnnStatus_t Workspace(size_t* bytes) {
  const char* v = std::getenv("FAKE_CUDNN_WORKSPACE");
  if (v == nullptr) return CUDNN_STATUS_NOT_SUPPORTED;
  *bytes = std::strtoull(v, nullptr, 10);
  return CUDNN_STATUS_SUCCESS;
}
}  // namespace

cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(
    cudnnHandle_t, const cudnnTensorDescriptor_t, const cudnnFilterDescriptor_t,
    const cudnnConvolutionDescriptor_t, const cudnnTensorDescriptor_t,
    cudnnConvolutionFwdAlgo_t, size_t* bytes) {
  return Workspace(bytes);
}
cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(
    cudnnHandle_t, const cudnnFilterDescriptor_t, const cudnnTensorDescriptor_t,
    const cudnnConvolutionDescriptor_t, const cudnnTensorDescriptor_t,
    cudnnConvolutionBwdDataAlgo_t, size_t* bytes) {
  return Workspace(bytes);
}
cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(
    cudnnHandle_t, const cudnnTensorDescriptor_t, const cudnnTensorDescriptor_t,
    const cudnnConvolutionDescriptor_t, const cudnnFilterDescriptor_t,
    cudnnConvolutionBwdFilterAlgo_t, size_t* bytes) {
  return Workspace(bytes);
}

// --- The legacy calls: fixed lists
// --------------------------------------------

cudnnStatus_t cudnnFindConvolutionForwardAlgorithm(
    cudnnHandle_t, const cudnnTensorDescriptor_t, const cudnnFilterDescriptor_t,
    const cudnnConvolutionDescriptor_t, const cudnnTensorDescriptor_t,
    const int requested, int* returned, cudnnConvolutionFwdAlgoPerf_t* out) {
  return Fill("fwd_find", kFindList, kListSize, requested, returned, out);
}
cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(
    cudnnHandle_t, const cudnnTensorDescriptor_t, const void*,
    const cudnnFilterDescriptor_t, const void*,
    const cudnnConvolutionDescriptor_t, const cudnnTensorDescriptor_t, void*,
    const int requested, int* returned, cudnnConvolutionFwdAlgoPerf_t* out,
    void*, size_t) {
  return Fill("fwd_find_ex", kFindList, kListSize, requested, returned, out);
}
cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t, const cudnnTensorDescriptor_t, const cudnnFilterDescriptor_t,
    const cudnnConvolutionDescriptor_t, const cudnnTensorDescriptor_t,
    const int requested, int* returned, cudnnConvolutionFwdAlgoPerf_t* out) {
  if (FailGetV7()) return CUDNN_STATUS_INTERNAL_ERROR;
  return Fill("fwd_get_v7", kHeuristicList, kListSize, requested, returned,
              out);
}

cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithm(
    cudnnHandle_t, const cudnnFilterDescriptor_t, const cudnnTensorDescriptor_t,
    const cudnnConvolutionDescriptor_t, const cudnnTensorDescriptor_t,
    const int requested, int* returned,
    cudnnConvolutionBwdDataAlgoPerf_t* out) {
  return Fill("bwd_data_find", kFindList, kListSize, requested, returned, out);
}
cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithmEx(
    cudnnHandle_t, const cudnnFilterDescriptor_t, const void*,
    const cudnnTensorDescriptor_t, const void*,
    const cudnnConvolutionDescriptor_t, const cudnnTensorDescriptor_t, void*,
    const int requested, int* returned, cudnnConvolutionBwdDataAlgoPerf_t* out,
    void*, size_t) {
  return Fill("bwd_data_find_ex", kFindList, kListSize, requested, returned,
              out);
}
cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t, const cudnnFilterDescriptor_t, const cudnnTensorDescriptor_t,
    const cudnnConvolutionDescriptor_t, const cudnnTensorDescriptor_t,
    const int requested, int* returned,
    cudnnConvolutionBwdDataAlgoPerf_t* out) {
  if (FailGetV7()) return CUDNN_STATUS_INTERNAL_ERROR;
  return Fill("bwd_data_get_v7", kHeuristicList, kListSize, requested, returned,
              out);
}

cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithm(
    cudnnHandle_t, const cudnnTensorDescriptor_t, const cudnnTensorDescriptor_t,
    const cudnnConvolutionDescriptor_t, const cudnnFilterDescriptor_t,
    const int requested, int* returned,
    cudnnConvolutionBwdFilterAlgoPerf_t* out) {
  return Fill("bwd_filter_find", kFindList, kListSize, requested, returned,
              out);
}
cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithmEx(
    cudnnHandle_t, const cudnnTensorDescriptor_t, const void*,
    const cudnnTensorDescriptor_t, const void*,
    const cudnnConvolutionDescriptor_t, const cudnnFilterDescriptor_t, void*,
    const int requested, int* returned,
    cudnnConvolutionBwdFilterAlgoPerf_t* out, void*, size_t) {
  return Fill("bwd_filter_find_ex", kFindList, kListSize, requested, returned,
              out);
}
cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cudnnHandle_t, const cudnnTensorDescriptor_t, const cudnnTensorDescriptor_t,
    const cudnnConvolutionDescriptor_t, const cudnnFilterDescriptor_t,
    const int requested, int* returned,
    cudnnConvolutionBwdFilterAlgoPerf_t* out) {
  if (FailGetV7()) return CUDNN_STATUS_INTERNAL_ERROR;
  return Fill("bwd_filter_get_v7", kHeuristicList, kListSize, requested,
              returned, out);
}

}  // extern "C"

// --- The backend (graph) API
// --------------------------------------------------
//
// Every descriptor is a generic attribute store: its descriptor type, whether
// it is finalized, and per attribute its type and elements. An attribute of
// type BACKEND_DESCRIPTOR holds copies of the referenced descriptors'
// contents (as cuDNN does: the caller may destroy them after the set), and a
// get copies them into the caller's pre-created descriptors. Like cuDNN 9.19,
// an operation graph's CUDNN_ATTR_OPERATIONGRAPH_OPS and a tensor's
// CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT cannot be read back (NOT_SUPPORTED), a
// set on a finalized descriptor is BAD_PARAM, a get on an unfinalized one
// NOT_INITIALIZED, and a get's element count is what it wrote (the
// attribute's count for requested 0). preload_graph_test compares these
// with the real cuDNN's host-only answers (graph_probe.cc --fidelity).

namespace {

struct Desc;

struct Attr {
  cudnnBackendAttributeType_t type = CUDNN_TYPE_INT64;
  int64_t count = 0;
  std::vector<unsigned char> bytes;                // count * element size
  std::vector<std::shared_ptr<const Desc>> descs;  // BACKEND_DESCRIPTOR
};

struct Desc {
  cudnnBackendDescriptorType_t type = CUDNN_BACKEND_TENSOR_DESCRIPTOR;
  bool finalized = false;
  bool loaded = false;  // a plan finalized from its serialized form
  std::map<int, Attr> attrs;
};

std::atomic<int64_t> live_descriptors{0};

size_t ElementSize(cudnnBackendAttributeType_t type) {
  switch (type) {
    case CUDNN_TYPE_HANDLE:
    case CUDNN_TYPE_VOID_PTR:
    case CUDNN_TYPE_BACKEND_DESCRIPTOR:
      return sizeof(void*);
    case CUDNN_TYPE_BOOLEAN:
      return sizeof(bool);
    case CUDNN_TYPE_INT64:
    case CUDNN_TYPE_DOUBLE:
      return 8;
    case CUDNN_TYPE_FLOAT:
    case CUDNN_TYPE_INT32:
      return 4;
    case CUDNN_TYPE_CHAR:
      return 1;
    case CUDNN_TYPE_FRACTION:
      return sizeof(cudnnFraction_t);
    default:
      return sizeof(int);  // the enum types
  }
}

// Which descriptor type an attribute the fake knows belongs to, and its
// element type; attributes it does not know are stored as given.
// (A FLOAT attribute, a scaling factor, also takes a DOUBLE.)
struct AttrRule {
  cudnnBackendAttributeName_t name;
  cudnnBackendDescriptorType_t owner;
  cudnnBackendAttributeType_t type;
};

constexpr cudnnBackendDescriptorType_t kTensor =
    CUDNN_BACKEND_TENSOR_DESCRIPTOR;
constexpr cudnnBackendDescriptorType_t kConvolution =
    CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR;
constexpr cudnnBackendDescriptorType_t kFwd =
    CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR;
constexpr cudnnBackendDescriptorType_t kBwdData =
    CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR;
constexpr cudnnBackendDescriptorType_t kBwdFilter =
    CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR;
constexpr cudnnBackendDescriptorType_t kPointwise =
    CUDNN_BACKEND_POINTWISE_DESCRIPTOR;
constexpr cudnnBackendDescriptorType_t kPointwiseOp =
    CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR;
constexpr cudnnBackendDescriptorType_t kGraph =
    CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR;
constexpr cudnnBackendDescriptorType_t kHeur =
    CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR;
constexpr cudnnBackendDescriptorType_t kEngine =
    CUDNN_BACKEND_ENGINE_DESCRIPTOR;
constexpr cudnnBackendDescriptorType_t kConfig =
    CUDNN_BACKEND_ENGINECFG_DESCRIPTOR;
constexpr cudnnBackendDescriptorType_t kKnob =
    CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR;

constexpr cudnnBackendDescriptorType_t kPlan =
    CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR;
constexpr cudnnBackendAttributeType_t kI64 = CUDNN_TYPE_INT64;
constexpr cudnnBackendAttributeType_t kDescT = CUDNN_TYPE_BACKEND_DESCRIPTOR;
constexpr cudnnBackendAttributeType_t kDataT = CUDNN_TYPE_DATA_TYPE;
constexpr cudnnBackendAttributeType_t kF32 = CUDNN_TYPE_FLOAT;

constexpr AttrRule kRules[] = {
    {CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, kTensor, kI64},
    {CUDNN_ATTR_TENSOR_DATA_TYPE, kTensor, kDataT},
    {CUDNN_ATTR_TENSOR_DIMENSIONS, kTensor, kI64},
    {CUDNN_ATTR_TENSOR_STRIDES, kTensor, kI64},
    {CUDNN_ATTR_TENSOR_UNIQUE_ID, kTensor, kI64},
    {CUDNN_ATTR_TENSOR_IS_VIRTUAL, kTensor, CUDNN_TYPE_BOOLEAN},
    {CUDNN_ATTR_TENSOR_VECTOR_COUNT, kTensor, kI64},
    {CUDNN_ATTR_TENSOR_VECTORIZED_DIMENSION, kTensor, kI64},
    {CUDNN_ATTR_CONVOLUTION_COMP_TYPE, kConvolution, kDataT},
    {CUDNN_ATTR_CONVOLUTION_CONV_MODE, kConvolution,
     CUDNN_TYPE_CONVOLUTION_MODE},
    {CUDNN_ATTR_CONVOLUTION_DILATIONS, kConvolution, kI64},
    {CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, kConvolution, kI64},
    {CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, kConvolution, kI64},
    {CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, kConvolution, kI64},
    {CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, kConvolution, kI64},
    {CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, kFwd, kF32},
    {CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, kFwd, kF32},
    {CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, kFwd, kDescT},
    {CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, kFwd, kDescT},
    {CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, kFwd, kDescT},
    {CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, kFwd, kDescT},
    {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, kBwdData, kF32},
    {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, kBwdData, kF32},
    {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, kBwdData, kDescT},
    {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, kBwdData, kDescT},
    {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, kBwdData, kDescT},
    {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, kBwdData, kDescT},
    {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, kBwdFilter, kF32},
    {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA, kBwdFilter, kF32},
    {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, kBwdFilter, kDescT},
    {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, kBwdFilter, kDescT},
    {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, kBwdFilter, kDescT},
    {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, kBwdFilter, kDescT},
    {CUDNN_ATTR_POINTWISE_MODE, kPointwise, CUDNN_TYPE_POINTWISE_MODE},
    {CUDNN_ATTR_POINTWISE_MATH_PREC, kPointwise, kDataT},
    {CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, kPointwiseOp, kDescT},
    {CUDNN_ATTR_OPERATION_POINTWISE_XDESC, kPointwiseOp, kDescT},
    {CUDNN_ATTR_OPERATION_POINTWISE_BDESC, kPointwiseOp, kDescT},
    {CUDNN_ATTR_OPERATION_POINTWISE_YDESC, kPointwiseOp, kDescT},
    {CUDNN_ATTR_OPERATIONGRAPH_HANDLE, kGraph, CUDNN_TYPE_HANDLE},
    {CUDNN_ATTR_OPERATIONGRAPH_OPS, kGraph, kDescT},
    {CUDNN_ATTR_ENGINEHEUR_MODE, kHeur, CUDNN_TYPE_HEUR_MODE},
    {CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, kHeur, kDescT},
    {CUDNN_ATTR_ENGINEHEUR_RESULTS, kHeur, kDescT},
    {CUDNN_ATTR_ENGINECFG_ENGINE, kConfig, kDescT},
    {CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, kConfig, kDescT},
    {CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, kKnob, CUDNN_TYPE_KNOB_TYPE},
    {CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, kKnob, kI64},
    {CUDNN_ATTR_ENGINE_OPERATION_GRAPH, kEngine, kDescT},
    {CUDNN_ATTR_ENGINE_GLOBAL_INDEX, kEngine, kI64},
    {CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, kEngine, CUDNN_TYPE_NUMERICAL_NOTE},
    {CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, kEngine, CUDNN_TYPE_BEHAVIOR_NOTE},
    {CUDNN_ATTR_EXECUTION_PLAN_HANDLE, kPlan, CUDNN_TYPE_HANDLE},
    {CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, kPlan, kDescT},
    {CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, kPlan, kI64},
    {CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, kPlan, CUDNN_TYPE_CHAR},
};

const AttrRule* RuleOf(cudnnBackendAttributeName_t name) {
  for (const AttrRule& r : kRules) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

Desc* AsDesc(cudnnBackendDescriptor_t d) { return reinterpret_cast<Desc*>(d); }

void SetInt64(Desc& d, cudnnBackendAttributeName_t name,
              cudnnBackendAttributeType_t type,
              const std::vector<int64_t>& values) {
  Attr a;
  a.type = type;
  a.count = static_cast<int64_t>(values.size());
  const size_t size = ElementSize(type);
  a.bytes.resize(values.size() * size);
  for (size_t i = 0; i < values.size(); ++i) {
    if (size == 8) {
      std::memcpy(a.bytes.data() + i * size, &values[i], size);
    } else {
      const int v = static_cast<int>(values[i]);
      std::memcpy(a.bytes.data() + i * size, &v, size);
    }
  }
  d.attrs[name] = std::move(a);
}

// The first element of an INT64 or enum attribute, or `otherwise`.
int64_t FirstValue(const Desc& d, cudnnBackendAttributeName_t name,
                   int64_t otherwise) {
  auto it = d.attrs.find(name);
  if (it == d.attrs.end() || it->second.count < 1) return otherwise;
  const Attr& a = it->second;
  if (ElementSize(a.type) == 8) {
    int64_t v = 0;
    std::memcpy(&v, a.bytes.data(), 8);
    return v;
  }
  int v = 0;
  std::memcpy(&v, a.bytes.data(), sizeof(int));
  return v;
}

bool Has(const Desc& d, cudnnBackendAttributeName_t name) {
  return d.attrs.count(name) > 0;
}

// What cuDNN does while it loads a serialized plan: descriptors of its own,
// made, finalized and destroyed through the exported functions, which a
// preloaded library may define (cuDNN's own calls then reach it).
void ReenterAsCudnnDoes() {
  const auto create = reinterpret_cast<decltype(&cudnnBackendCreateDescriptor)>(
      dlsym(RTLD_DEFAULT, "cudnnBackendCreateDescriptor"));
  const auto finalize = reinterpret_cast<decltype(&cudnnBackendFinalize)>(
      dlsym(RTLD_DEFAULT, "cudnnBackendFinalize"));
  const auto destroy =
      reinterpret_cast<decltype(&cudnnBackendDestroyDescriptor)>(
          dlsym(RTLD_DEFAULT, "cudnnBackendDestroyDescriptor"));
  cudnnBackendDescriptor_t own = nullptr;
  if (create == nullptr || finalize == nullptr || destroy == nullptr ||
      create(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, &own) !=
          CUDNN_STATUS_SUCCESS) {
    return;
  }
  if (finalize(own) == CUDNN_STATUS_SUCCESS) Count("backend_plan_load_inner");
  destroy(own);
}

// Whether plan `d` loads its serialized form (see the top), counted.
bool LoadsSerializedPlan(Desc& d) {
  const Attr& a = d.attrs[CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION];
  const nlohmann::json plan =
      nlohmann::json::parse(a.bytes.begin(), a.bytes.end(), nullptr, false);
  static const char* limit = std::getenv("FAKE_CUDNN_PLAN_LOADS");
  static std::atomic<int64_t> loads{0};
  if (plan.is_discarded() || !plan.is_object() ||
      !plan.contains("operationGraph") ||
      plan.value("cudnnVersion", int64_t{-1}) !=
          static_cast<int64_t>(cudnnGetVersion()) ||
      (limit != nullptr && loads.load() >= std::strtoll(limit, nullptr, 10))) {
    Count("backend_plan_load_refused");
    return false;
  }
  ++loads;
  Count("backend_plan_load");
  ReenterAsCudnnDoes();
  std::vector<std::string> names;
  for (const auto& t : plan["operationGraph"].value("tensors", nlohmann::json::array())) {
    names.push_back(t.value("name", ""));
  }
  const std::vector<std::string> probe_ids = {std::to_string('x'),
                                              std::to_string('w'),
                                              std::to_string('y')};
  if (names == probe_ids) Count("backend_plan_load_caller_ids");
  return true;
}

// FAKE_CUDNN_REJECT_ENGINES=a,b: the engines whose finalize fails.
bool Rejected(int64_t engine) {
  const char* v = std::getenv("FAKE_CUDNN_REJECT_ENGINES");
  if (v == nullptr) return false;
  const std::string list = v;
  size_t at = 0;
  while (at <= list.size()) {
    size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    const std::string item = list.substr(at, comma - at);
    if (!item.empty() && std::strtoll(item.c_str(), nullptr, 10) == engine) {
      return true;
    }
    at = comma + 1;
  }
  return false;
}

// Finalizes engine descriptor `d` (its graph and global index set), with
// the notes the catalog gives its index; FAKE_CUDNN_REJECT_ENGINES applies
// when `honour_rejects`.
cudnnStatus_t FinalizeEngine(Desc& d, bool honour_rejects) {
  auto graph = d.attrs.find(CUDNN_ATTR_ENGINE_OPERATION_GRAPH);
  if (graph == d.attrs.end() || graph->second.descs.size() != 1 ||
      !Has(d, CUDNN_ATTR_ENGINE_GLOBAL_INDEX)) {
    return CUDNN_STATUS_BAD_PARAM;
  }
  const int64_t index = FirstValue(d, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, -1);
  if (index < 0 || index >= fake_cudnn::kEngineCount) {
    return CUDNN_STATUS_BAD_PARAM;
  }
  if (honour_rejects && Rejected(index)) return CUDNN_STATUS_NOT_SUPPORTED;
  std::vector<int64_t> notes;
  if (fake_cudnn::EngineUsesTensorCores(index)) {
    notes.push_back(CUDNN_NUMERICAL_NOTE_TENSOR_CORE);
  }
  if (fake_cudnn::EngineIsNondeterministic(index)) {
    notes.push_back(CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC);
  }
  SetInt64(d, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
           notes);
  SetInt64(d, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE, {});
  d.finalized = true;
  return CUDNN_STATUS_SUCCESS;
}

// A finalized engine config of engine `index` on `graph`, without knobs:
// one entry of a heuristic's results.
Desc HeuristicConfig(const std::shared_ptr<const Desc>& graph, int index) {
  Desc engine;
  engine.type = kEngine;
  Attr g;
  g.type = kDescT;
  g.count = 1;
  g.descs = {graph};
  engine.attrs[CUDNN_ATTR_ENGINE_OPERATION_GRAPH] = g;
  SetInt64(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, kI64, {index});
  // The heuristic's own configs are finalized whatever the environment
  // rejects: the list stays cuDNN's.
  FinalizeEngine(engine, /*honour_rejects=*/false);
  Desc config;
  config.type = kConfig;
  Attr e;
  e.type = kDescT;
  e.count = 1;
  e.descs = {std::make_shared<const Desc>(std::move(engine))};
  config.attrs[CUDNN_ATTR_ENGINECFG_ENGINE] = std::move(e);
  Attr knobs;
  knobs.type = kDescT;
  config.attrs[CUDNN_ATTR_ENGINECFG_KNOB_CHOICES] = std::move(knobs);
  config.finalized = true;
  return config;
}

// CUDNN_ATTR_ENGINEHEUR_RESULTS of finalized heuristics descriptor `heur`.
cudnnStatus_t HeuristicResults(const Desc& heur, int64_t requested,
                               int64_t* count, void* elements) {
  const auto graph = heur.attrs.find(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH);
  const fake_cudnn::EngineList list = fake_cudnn::HeuristicEngines(
      static_cast<int>(FirstValue(heur, CUDNN_ATTR_ENGINEHEUR_MODE, 0)));
  if (requested == 0 && elements == nullptr) {
    Count("backend_heur_count");
    *count = list.size;
    return CUDNN_STATUS_SUCCESS;
  }
  Count("backend_heur_results");
  if (requested < 0 || elements == nullptr || graph == heur.attrs.end() ||
      graph->second.descs.size() != 1) {
    return CUDNN_STATUS_BAD_PARAM;
  }
  auto* out = static_cast<cudnnBackendDescriptor_t*>(elements);
  const int64_t n = std::min<int64_t>(requested, list.size);
  for (int64_t i = 0; i < n; ++i) {
    Desc* target = AsDesc(out[i]);
    if (target == nullptr || target->type != kConfig) {
      return CUDNN_STATUS_BAD_PARAM;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    *AsDesc(out[i]) = HeuristicConfig(graph->second.descs[0], list.engines[i]);
  }
  *count = n;
  return CUDNN_STATUS_SUCCESS;
}

// Whether `a` and `b` hold the same contents, recursively.
bool SameContents(const Desc& a, const Desc& b) {
  if (a.type != b.type || a.finalized != b.finalized ||
      a.attrs.size() != b.attrs.size()) {
    return false;
  }
  for (const auto& [name, x] : a.attrs) {
    auto it = b.attrs.find(name);
    if (it == b.attrs.end()) return false;
    const Attr& y = it->second;
    if (x.type != y.type || x.count != y.count || x.bytes != y.bytes ||
        x.descs.size() != y.descs.size()) {
      return false;
    }
    for (size_t i = 0; i < x.descs.size(); ++i) {
      if (!SameContents(*x.descs[i], *y.descs[i])) return false;
    }
  }
  return true;
}

}  // namespace

extern "C" {

int64_t fakeCudnnLiveDescriptors() { return live_descriptors.load(); }

int fakeCudnnSameContents(cudnnBackendDescriptor_t a,
                          cudnnBackendDescriptor_t b) {
  if (a == nullptr || b == nullptr) return 0;
  return SameContents(*AsDesc(a), *AsDesc(b)) ? 1 : 0;
}

cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type,
                                           cudnnBackendDescriptor_t* d) {
  if (d == nullptr) return CUDNN_STATUS_BAD_PARAM;
  Desc* desc = new Desc();
  desc->type = type;
  *d = reinterpret_cast<cudnnBackendDescriptor_t>(desc);
  ++live_descriptors;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle,
                                  cudnnBackendDescriptor_t plan,
                                  cudnnBackendDescriptor_t variant_pack) {
  const Desc* d = AsDesc(plan);
  if (handle == nullptr || d == nullptr || variant_pack == nullptr ||
      d->type != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR || !d->finalized) {
    return CUDNN_STATUS_BAD_PARAM;
  }
  const char* fail = std::getenv(d->loaded ? "FAKE_CUDNN_LOADED_PLANS_FAIL"
                                           : "FAKE_CUDNN_BUILT_PLANS_FAIL");
  if (fail != nullptr && (fail[0] == '1' || std::string(fail) == "bad_param")) {
    Count("backend_execute_failed");
    return fail[0] == '1' ? CUDNN_STATUS_EXECUTION_FAILED
                          : CUDNN_STATUS_BAD_PARAM;
  }
  Count("backend_execute");
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t d) {
  if (d == nullptr) return CUDNN_STATUS_BAD_PARAM;
  delete AsDesc(d);
  --live_descriptors;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor,
                                       cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type,
                                       int64_t count, const void* elements) {
  Desc* d = AsDesc(descriptor);
  if (d == nullptr || count < 0 || (count > 0 && elements == nullptr)) {
    return CUDNN_STATUS_BAD_PARAM;
  }
  if (d->finalized) return CUDNN_STATUS_BAD_PARAM;
  const AttrRule* rule = RuleOf(name);
  const bool type_ok =
      rule == nullptr || type == rule->type ||
      (rule->type == CUDNN_TYPE_FLOAT && type == CUDNN_TYPE_DOUBLE);
  if (rule != nullptr && (rule->owner != d->type || !type_ok ||
                          name == CUDNN_ATTR_ENGINEHEUR_RESULTS)) {
    return CUDNN_STATUS_BAD_PARAM;
  }
  Attr a;
  a.type = type;
  a.count = count;
  if (type == kDescT) {
    const auto* refs = static_cast<const cudnnBackendDescriptor_t*>(elements);
    for (int64_t i = 0; i < count; ++i) {
      const Desc* ref = AsDesc(refs[i]);
      if (ref == nullptr) return CUDNN_STATUS_BAD_PARAM;
      a.descs.push_back(std::make_shared<const Desc>(*ref));
    }
  } else {
    const auto* p = static_cast<const unsigned char*>(elements);
    a.bytes.assign(p, p + count * ElementSize(type));
  }
  d->attrs[name] = std::move(a);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendGetAttribute(
    cudnnBackendDescriptor_t const descriptor, cudnnBackendAttributeName_t name,
    cudnnBackendAttributeType_t type, int64_t requested, int64_t* count,
    void* elements) {
  const Desc* d = AsDesc(descriptor);
  if (d == nullptr || count == nullptr || requested < 0) {
    return CUDNN_STATUS_BAD_PARAM;
  }
  if (!d->finalized) return CUDNN_STATUS_NOT_INITIALIZED;
  if (name == CUDNN_ATTR_ENGINEHEUR_RESULTS && d->type == kHeur) {
    if (type != kDescT) return CUDNN_STATUS_BAD_PARAM;
    return HeuristicResults(*d, requested, count, elements);
  }
  // What cuDNN 9.19 cannot read back.
  if (name == CUDNN_ATTR_OPERATIONGRAPH_OPS ||
      name == CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT) {
    return CUDNN_STATUS_NOT_SUPPORTED;
  }
  auto it = d->attrs.find(name);
  if (it == d->attrs.end()) return CUDNN_STATUS_NOT_SUPPORTED;
  const Attr& a = it->second;
  if (type != a.type) return CUDNN_STATUS_BAD_PARAM;
  // The count is the attribute's for requested 0, else what was written.
  *count = a.count;
  if (requested == 0) return CUDNN_STATUS_SUCCESS;
  if (elements == nullptr) return CUDNN_STATUS_BAD_PARAM;
  const int64_t n = std::min(requested, a.count);
  *count = n;
  if (type == kDescT) {
    auto* out = static_cast<cudnnBackendDescriptor_t*>(elements);
    for (int64_t i = 0; i < n; ++i) {
      Desc* target = AsDesc(out[i]);
      if (target == nullptr || target->type != a.descs[i]->type) {
        return CUDNN_STATUS_BAD_PARAM;
      }
    }
    for (int64_t i = 0; i < n; ++i) *AsDesc(out[i]) = *a.descs[i];
  } else {
    std::memcpy(elements, a.bytes.data(), n * ElementSize(type));
  }
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor) {
  Desc* d = AsDesc(descriptor);
  if (d == nullptr) return CUDNN_STATUS_BAD_PARAM;
  if (d->finalized) return CUDNN_STATUS_BAD_PARAM;
  // cuDNN takes unfinalized descriptors as attribute values, but finalizes
  // nothing that refers to one.
  for (const auto& [name, a] : d->attrs) {
    for (const auto& ref : a.descs) {
      if (!ref->finalized) return CUDNN_STATUS_BAD_PARAM;
    }
  }
  switch (d->type) {
    case kEngine:
      Count("backend_engine_finalize");
      return FinalizeEngine(*d, /*honour_rejects=*/true);
    case kConfig: {
      auto engine = d->attrs.find(CUDNN_ATTR_ENGINECFG_ENGINE);
      if (engine == d->attrs.end() || engine->second.descs.size() != 1) {
        return CUDNN_STATUS_BAD_PARAM;
      }
      // A config finalized without knob choices has none (count 0), as in
      // cuDNN, which tunedb's own graph code relies on for knob-less engines.
      Attr& knobs = d->attrs[CUDNN_ATTR_ENGINECFG_KNOB_CHOICES];
      knobs.type = kDescT;
      break;
    }
    case kHeur:
      if (!Has(*d, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH) ||
          !Has(*d, CUDNN_ATTR_ENGINEHEUR_MODE)) {
        return CUDNN_STATUS_BAD_PARAM;
      }
      break;
    case kGraph:
      if (!Has(*d, CUDNN_ATTR_OPERATIONGRAPH_OPS)) {
        return CUDNN_STATUS_BAD_PARAM;
      }
      break;
    case kPlan:
      if (Has(*d, CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION)) {
        if (!Has(*d, CUDNN_ATTR_EXECUTION_PLAN_HANDLE)) {
          Count("backend_plan_load_no_handle");
          return CUDNN_STATUS_BAD_PARAM;
        }
        if (Has(*d, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG) ||
            !LoadsSerializedPlan(*d)) {
          return CUDNN_STATUS_BAD_PARAM;
        }
        d->loaded = true;
      } else if (!Has(*d, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG)) {
        // A plan of any config builds, needing FAKE_CUDNN_PLAN_WORKSPACE
        // bytes (default 0).
        return CUDNN_STATUS_BAD_PARAM;
      } else {
        Count("backend_plan_finalize");
      }
      {
        const char* v = std::getenv("FAKE_CUDNN_PLAN_WORKSPACE");
        SetInt64(*d, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, kI64,
                 {v != nullptr ? std::strtoll(v, nullptr, 10) : 0});
      }
      break;
    case kKnob:
      if (!Has(*d, CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE) ||
          !Has(*d, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE)) {
        return CUDNN_STATUS_BAD_PARAM;
      }
      break;
    default:
      break;
  }
  d->finalized = true;
  return CUDNN_STATUS_SUCCESS;
}

}  // extern "C"
