// The cuDNN entry points libtunedb_preload.so defines (exported under the
// libcudnn.so.9 version node by libcudnn_node.map): the legacy Find and
// Get_v7 calls of the three convolution passes. Each asks the Interposer (in
// libtunedb_preload_core.so, core_loader.h);
// on a hit it fills the caller's perf array from tunedb (perf_merge.h, with
// the real Get_v7's list as the tail), otherwise it calls the real function
// with the caller's arguments unchanged.
//
// Thread safety: every entry point is as thread-safe as cuDNN's own.
#include <cudnn.h>

#include <exception>
#include <optional>

#include "preload/conv_call.h"
#include "preload/core_loader.h"
#include "preload/inside_preload.h"
#include "preload/perf_merge.h"
#include "preload/real_cudnn.h"

namespace tunedb::preload {
namespace {

// Larger than any pass's algorithm count (CUDNN_CONVOLUTION_*_ALGO_COUNT).
constexpr int kHeuristicCapacity = 16;

template <typename Fn, typename... Args>
cudnnStatus_t CallReal(RealFunction<Fn>& fn, Args... args) {
  Fn f = fn.get();
  // No cuDNN defines it: cannot happen in a program linked against cuDNN.
  return f != nullptr ? f(args...) : CUDNN_STATUS_NOT_INITIALIZED;
}

// Per pass: its perf struct and its real Get_v7, called with a ConvCall's
// descriptors put back in the pass's own argument order.
struct Forward {
  using Perf = cudnnConvolutionFwdAlgoPerf_t;
  static inline RealFunction<decltype(&cudnnGetConvolutionForwardAlgorithm_v7)>
      get_v7{"cudnnGetConvolutionForwardAlgorithm_v7"};
  static cudnnStatus_t Heuristic(const ConvCall& c, int cap, int* n, Perf* p) {
    return CallReal(get_v7, c.handle, c.x, c.w, c.conv, c.y, cap, n, p);
  }
};
struct BackwardData {
  using Perf = cudnnConvolutionBwdDataAlgoPerf_t;
  static inline RealFunction<
      decltype(&cudnnGetConvolutionBackwardDataAlgorithm_v7)>
      get_v7{"cudnnGetConvolutionBackwardDataAlgorithm_v7"};
  static cudnnStatus_t Heuristic(const ConvCall& c, int cap, int* n, Perf* p) {
    return CallReal(get_v7, c.handle, c.w, c.y, c.conv, c.x, cap, n, p);
  }
};
struct BackwardFilter {
  using Perf = cudnnConvolutionBwdFilterAlgoPerf_t;
  static inline RealFunction<
      decltype(&cudnnGetConvolutionBackwardFilterAlgorithm_v7)>
      get_v7{"cudnnGetConvolutionBackwardFilterAlgorithm_v7"};
  static cudnnStatus_t Heuristic(const ConvCall& c, int cap, int* n, Perf* p) {
    return CallReal(get_v7, c.handle, c.x, c.y, c.conv, c.w, cap, n, p);
  }
};

// Answers `call` from tunedb, or returns `real()` (the caller's own call,
// unchanged).
template <typename Pass, typename Real>
cudnnStatus_t AnswerOrPass(const ConvCall& call, int requested, int* returned,
                           typename Pass::Perf* results, Real real) {
  if (inside_preload) return real();
  const InsidePreload guard;
  const CoreApi* core = LoadedCore();
  if (core == nullptr) return real();
  if (requested < 1 || returned == nullptr || results == nullptr ||
      call.x == nullptr || call.w == nullptr || call.conv == nullptr ||
      call.y == nullptr) {
    core->record(call, Outcome::kBadArguments, -1, "");
    return real();
  }
  const Decision d = core->decide(call);
  if (!d.hit()) {
    core->record(call, d.outcome, -1, d.key_text);
    return real();
  }
  typename Pass::Perf list[kHeuristicCapacity] = {};
  int listed = 0;
  if (Pass::Heuristic(call, kHeuristicCapacity, &listed, list) !=
          CUDNN_STATUS_SUCCESS ||
      listed < 0 || listed > kHeuristicCapacity) {
    core->record(call, Outcome::kHeuristicFailed, -1, d.key_text);
    return real();
  }
  const int n = MergeTuned(d.tuned, list, listed, call.workspace_limit, results,
                           requested);
  if (n < 1) {
    core->record(call, Outcome::kHeuristicFailed, -1, d.key_text);
    return real();
  }
  *returned = n;
  core->record(call, Outcome::kHit, static_cast<int>(results[0].algo),
               d.key_text);
  return CUDNN_STATUS_SUCCESS;
}

// A Get_v7 call: on a miss the real Get_v7 itself.
template <typename Pass>
cudnnStatus_t GetV7(const ConvCall& call, int requested, int* returned,
                    typename Pass::Perf* results) {
  return AnswerOrPass<Pass>(call, requested, returned, results, [&] {
    return Pass::Heuristic(call, requested, returned, results);
  });
}

RealFunction<decltype(&cudnnFindConvolutionForwardAlgorithm)> real_fwd_find(
    "cudnnFindConvolutionForwardAlgorithm");
RealFunction<decltype(&cudnnFindConvolutionForwardAlgorithmEx)>
    real_fwd_find_ex("cudnnFindConvolutionForwardAlgorithmEx");
RealFunction<decltype(&cudnnFindConvolutionBackwardDataAlgorithm)>
    real_bwd_data_find("cudnnFindConvolutionBackwardDataAlgorithm");
RealFunction<decltype(&cudnnFindConvolutionBackwardDataAlgorithmEx)>
    real_bwd_data_find_ex("cudnnFindConvolutionBackwardDataAlgorithmEx");
RealFunction<decltype(&cudnnFindConvolutionBackwardFilterAlgorithm)>
    real_bwd_filter_find("cudnnFindConvolutionBackwardFilterAlgorithm");
RealFunction<decltype(&cudnnFindConvolutionBackwardFilterAlgorithmEx)>
    real_bwd_filter_find_ex("cudnnFindConvolutionBackwardFilterAlgorithmEx");

}  // namespace
}  // namespace tunedb::preload

using namespace tunedb::preload;  // NOLINT: the C entry points below
using tunedb::ConvOp;

// --- Forward -----------------------------------------------------------------

extern "C" cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc,
    const cudnnFilterDescriptor_t filterDesc,
    const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t destDesc, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t* perfResults) {
  return GetV7<Forward>(
      {ConvOp::kForward, handle, srcDesc, filterDesc, convDesc, destDesc, {}},
      requestedAlgoCount, returnedAlgoCount, perfResults);
}

extern "C" cudnnStatus_t cudnnFindConvolutionForwardAlgorithm(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
    const cudnnFilterDescriptor_t wDesc,
    const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t yDesc, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t* perfResults) {
  return AnswerOrPass<Forward>(
      {ConvOp::kForward, handle, xDesc, wDesc, convDesc, yDesc, {}},
      requestedAlgoCount, returnedAlgoCount, perfResults, [&] {
        return CallReal(real_fwd_find, handle, xDesc, wDesc, convDesc, yDesc,
                        requestedAlgoCount, returnedAlgoCount, perfResults);
      });
}

extern "C" cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const void* x,
    const cudnnFilterDescriptor_t wDesc, const void* w,
    const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t yDesc, void* y, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t* perfResults,
    void* workSpace, size_t workSpaceSizeInBytes) {
  return AnswerOrPass<Forward>(
      {ConvOp::kForward, handle, xDesc, wDesc, convDesc, yDesc,
       workSpaceSizeInBytes},
      requestedAlgoCount, returnedAlgoCount, perfResults, [&] {
        return CallReal(real_fwd_find_ex, handle, xDesc, x, wDesc, w, convDesc,
                        yDesc, y, requestedAlgoCount, returnedAlgoCount,
                        perfResults, workSpace, workSpaceSizeInBytes);
      });
}

// --- Backward data (the call's x is dx, its y is dy)
// ---------------------------

extern "C" cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t filterDesc,
    const cudnnTensorDescriptor_t diffDesc,
    const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t gradDesc, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionBwdDataAlgoPerf_t* perfResults) {
  return GetV7<BackwardData>({ConvOp::kBackwardData,
                              handle,
                              gradDesc,
                              filterDesc,
                              convDesc,
                              diffDesc,
                              {}},
                             requestedAlgoCount, returnedAlgoCount,
                             perfResults);
}

extern "C" cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithm(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc,
    const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t dxDesc, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionBwdDataAlgoPerf_t* perfResults) {
  return AnswerOrPass<BackwardData>(
      {ConvOp::kBackwardData, handle, dxDesc, wDesc, convDesc, dyDesc, {}},
      requestedAlgoCount, returnedAlgoCount, perfResults, [&] {
        return CallReal(real_bwd_data_find, handle, wDesc, dyDesc, convDesc,
                        dxDesc, requestedAlgoCount, returnedAlgoCount,
                        perfResults);
      });
}

extern "C" cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithmEx(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc, const void* w,
    const cudnnTensorDescriptor_t dyDesc, const void* dy,
    const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t dxDesc, void* dx,
    const int requestedAlgoCount, int* returnedAlgoCount,
    cudnnConvolutionBwdDataAlgoPerf_t* perfResults, void* workSpace,
    size_t workSpaceSizeInBytes) {
  return AnswerOrPass<BackwardData>(
      {ConvOp::kBackwardData, handle, dxDesc, wDesc, convDesc, dyDesc,
       workSpaceSizeInBytes},
      requestedAlgoCount, returnedAlgoCount, perfResults, [&] {
        return CallReal(real_bwd_data_find_ex, handle, wDesc, w, dyDesc, dy,
                        convDesc, dxDesc, dx, requestedAlgoCount,
                        returnedAlgoCount, perfResults, workSpace,
                        workSpaceSizeInBytes);
      });
}

// --- Backward filter (the call's w is dw, its y is dy)
// -------------------------

extern "C" cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc,
    const cudnnTensorDescriptor_t diffDesc,
    const cudnnConvolutionDescriptor_t convDesc,
    const cudnnFilterDescriptor_t gradDesc, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionBwdFilterAlgoPerf_t* perfResults) {
  return GetV7<BackwardFilter>({ConvOp::kBackwardFilter,
                                handle,
                                srcDesc,
                                gradDesc,
                                convDesc,
                                diffDesc,
                                {}},
                               requestedAlgoCount, returnedAlgoCount,
                               perfResults);
}

extern "C" cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithm(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
    const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc,
    const cudnnFilterDescriptor_t dwDesc, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionBwdFilterAlgoPerf_t* perfResults) {
  return AnswerOrPass<BackwardFilter>(
      {ConvOp::kBackwardFilter, handle, xDesc, dwDesc, convDesc, dyDesc, {}},
      requestedAlgoCount, returnedAlgoCount, perfResults, [&] {
        return CallReal(real_bwd_filter_find, handle, xDesc, dyDesc, convDesc,
                        dwDesc, requestedAlgoCount, returnedAlgoCount,
                        perfResults);
      });
}

extern "C" cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithmEx(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const void* x,
    const cudnnTensorDescriptor_t dyDesc, const void* y,
    const cudnnConvolutionDescriptor_t convDesc,
    const cudnnFilterDescriptor_t dwDesc, void* dw,
    const int requestedAlgoCount, int* returnedAlgoCount,
    cudnnConvolutionBwdFilterAlgoPerf_t* perfResults, void* workSpace,
    size_t workSpaceSizeInBytes) {
  return AnswerOrPass<BackwardFilter>(
      {ConvOp::kBackwardFilter, handle, xDesc, dwDesc, convDesc, dyDesc,
       workSpaceSizeInBytes},
      requestedAlgoCount, returnedAlgoCount, perfResults, [&] {
        return CallReal(real_bwd_filter_find_ex, handle, xDesc, x, dyDesc, y,
                        convDesc, dwDesc, dw, requestedAlgoCount,
                        returnedAlgoCount, perfResults, workSpace,
                        workSpaceSizeInBytes);
      });
}
