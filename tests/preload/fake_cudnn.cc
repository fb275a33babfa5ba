// A small stand-in for libcudnn.so.9 (same soname and version node) for the
// preload tests on machines without a GPU: handles, tensor/filter/
// convolution descriptors that store and return what was set, and the
// legacy Find/FindEx/Get_v7 calls of the three passes, which return fixed,
// known perf arrays (FakeFindList / FakeHeuristicList below) and count
// their calls (fakeCudnnCallCount). Environment knobs:
//   FAKE_CUDNN_VERSION=N     cudnnGetVersion() returns N (default 91900)
//   FAKE_CUDNN_FAIL_GET_V7=1 every Get_v7 call fails
//   (CUDNN_STATUS_INTERNAL_ERROR)
//
// Thread safety: the counters are atomic; descriptors as in cuDNN.
#include <cudnn.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "fake_cudnn_lists.h"

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
