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

#include "cudnn/conv_pass_traits.h"
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

// Per pass (conv_pass_traits.h): its perf struct and the program's own
// Find, FindEx and Get_v7, looked up by name; Heuristic calls the real Get_v7
// with a ConvCall's descriptors put back in the pass's own argument order.
template <ConvOp kOp>
struct RealPass : PassTraits<kOp> {
  using Traits = PassTraits<kOp>;
  using Perf = typename Traits::Perf;
  static_assert(Traits::kAlgoCount <= kHeuristicCapacity);
  static inline RealFunction<typename decltype(Traits::kFind)::Fn> find{
      Traits::kFind.name};
  static inline RealFunction<typename decltype(Traits::kFindEx)::Fn> find_ex{
      Traits::kFindEx.name};
  static inline RealFunction<typename decltype(Traits::kGetV7)::Fn> get_v7{
      Traits::kGetV7.name};
  static cudnnStatus_t Heuristic(const ConvCall& c, int cap, int* n, Perf* p) {
    return CallReal(get_v7, c.handle, OperandOf<Traits::kA>(c),
                    OperandOf<Traits::kB>(c), c.conv,
                    OperandOf<Traits::kOut>(c), cap, n, p);
  }
};
using Forward = RealPass<ConvOp::kForward>;
using BackwardData = RealPass<ConvOp::kBackwardData>;
using BackwardFilter = RealPass<ConvOp::kBackwardFilter>;

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
  core->record(call, d.outcome, static_cast<int>(results[0].algo),
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
        return CallReal(Forward::find, handle, xDesc, wDesc, convDesc, yDesc,
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
        return CallReal(Forward::find_ex, handle, xDesc, x, wDesc, w, convDesc,
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
        return CallReal(BackwardData::find, handle, wDesc, dyDesc, convDesc,
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
        return CallReal(BackwardData::find_ex, handle, wDesc, w, dyDesc, dy,
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
        return CallReal(BackwardFilter::find, handle, xDesc, dyDesc, convDesc,
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
        return CallReal(BackwardFilter::find_ex, handle, xDesc, x, dyDesc, y,
                        convDesc, dwDesc, dw, requestedAlgoCount,
                        returnedAlgoCount, perfResults, workSpace,
                        workSpaceSizeInBytes);
      });
}
