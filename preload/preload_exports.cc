// The cuDNN entry points libtunedb_preload.so defines (exported under the
// libcudnn.so.9 version node by libcudnn_node.map): the legacy Find and
// Get_v7 calls of the three convolution passes. Each asks the Interposer;
// on a hit it fills the caller's perf array from tunedb (perf_merge.h, with
// the real Get_v7's list as the tail), otherwise it calls the real function
// with the caller's arguments unchanged.
//
// Thread safety: every entry point is as thread-safe as cuDNN's own.
#include <cudnn.h>

#include <exception>
#include <optional>

#include "preload/interposer.h"
#include "preload/perf_merge.h"
#include "preload/real_cudnn.h"

namespace tunedb::preload {
namespace {

// Larger than any pass's algorithm count (CUDNN_CONVOLUTION_*_ALGO_COUNT).
constexpr int kHeuristicCapacity = 16;

// `real` calls the real function; `heuristic(capacity, &count, perf)` the
// real Get_v7 on the same descriptors.
template <typename Perf, typename Heuristic, typename Real>
cudnnStatus_t AnswerOrPass(const ConvCall& call, int requested, int* returned,
                           Perf* results, Heuristic heuristic, Real real) {
  Interposer* interposer = nullptr;
  try {
    interposer = &Interposer::Instance();
  } catch (...) {
    return real();
  }
  if (requested < 1 || returned == nullptr || results == nullptr ||
      call.x == nullptr || call.w == nullptr || call.conv == nullptr ||
      call.y == nullptr) {
    interposer->Record(call, Outcome::kBadArguments, -1);
    return real();
  }
  const Decision d = interposer->Decide(call);
  if (!d.hit()) {
    interposer->Record(call, d.outcome, -1);
    return real();
  }
  Perf list[kHeuristicCapacity] = {};
  int listed = 0;
  if (heuristic(kHeuristicCapacity, &listed, list) != CUDNN_STATUS_SUCCESS ||
      listed < 0 || listed > kHeuristicCapacity) {
    interposer->Record(call, Outcome::kHeuristicFailed, -1);
    return real();
  }
  const int n = MergeTuned(d.tuned, list, listed, call.workspace_limit,
                           results, requested);
  if (n < 1) {
    interposer->Record(call, Outcome::kHeuristicFailed, -1);
    return real();
  }
  *returned = n;
  interposer->Record(call, Outcome::kHit, static_cast<int>(results[0].algo));
  return CUDNN_STATUS_SUCCESS;
}

// The real function `fn` called with `args`, or an error when no cuDNN
// defines it (which cannot happen in a program linked against cuDNN).
template <typename Fn, typename... Args>
cudnnStatus_t CallReal(RealFunction<Fn>& fn, Args... args) {
  Fn f = fn.get();
  return f != nullptr ? f(args...) : CUDNN_STATUS_NOT_INITIALIZED;
}

RealFunction<decltype(&cudnnGetConvolutionForwardAlgorithm_v7)> real_fwd_v7(
    "cudnnGetConvolutionForwardAlgorithm_v7");
RealFunction<decltype(&cudnnGetConvolutionBackwardDataAlgorithm_v7)>
    real_bwd_data_v7("cudnnGetConvolutionBackwardDataAlgorithm_v7");
RealFunction<decltype(&cudnnGetConvolutionBackwardFilterAlgorithm_v7)>
    real_bwd_filter_v7("cudnnGetConvolutionBackwardFilterAlgorithm_v7");
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

using tunedb::ConvOp;
using tunedb::preload::AnswerOrPass;
using tunedb::preload::CallReal;
using tunedb::preload::ConvCall;

// --- Forward -------------------------------------------------------------------

extern "C" cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc,
    const cudnnFilterDescriptor_t filterDesc,
    const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t destDesc, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t* perfResults) {
  using namespace tunedb::preload;
  auto heuristic = [&](int cap, int* count, cudnnConvolutionFwdAlgoPerf_t* p) {
    return CallReal(real_fwd_v7, handle, srcDesc, filterDesc, convDesc,
                    destDesc, cap, count, p);
  };
  return AnswerOrPass(
      ConvCall{ConvOp::kForward, srcDesc, filterDesc, convDesc, destDesc, {}},
      requestedAlgoCount, returnedAlgoCount, perfResults, heuristic, [&] {
        return heuristic(requestedAlgoCount, returnedAlgoCount, perfResults);
      });
}

extern "C" cudnnStatus_t cudnnFindConvolutionForwardAlgorithm(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
    const cudnnFilterDescriptor_t wDesc,
    const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t yDesc, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t* perfResults) {
  using namespace tunedb::preload;
  return AnswerOrPass(
      ConvCall{ConvOp::kForward, xDesc, wDesc, convDesc, yDesc, {}},
      requestedAlgoCount, returnedAlgoCount, perfResults,
      [&](int cap, int* count, cudnnConvolutionFwdAlgoPerf_t* p) {
        return CallReal(real_fwd_v7, handle, xDesc, wDesc, convDesc, yDesc,
                        cap, count, p);
      },
      [&] {
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
  using namespace tunedb::preload;
  return AnswerOrPass(
      ConvCall{ConvOp::kForward, xDesc, wDesc, convDesc, yDesc,
               workSpaceSizeInBytes},
      requestedAlgoCount, returnedAlgoCount, perfResults,
      [&](int cap, int* count, cudnnConvolutionFwdAlgoPerf_t* p) {
        return CallReal(real_fwd_v7, handle, xDesc, wDesc, convDesc, yDesc,
                        cap, count, p);
      },
      [&] {
        return CallReal(real_fwd_find_ex, handle, xDesc, x, wDesc, w, convDesc,
                        yDesc, y, requestedAlgoCount, returnedAlgoCount,
                        perfResults, workSpace, workSpaceSizeInBytes);
      });
}

// --- Backward data (x is dx, y is dy) ------------------------------------------

extern "C" cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t filterDesc,
    const cudnnTensorDescriptor_t diffDesc,
    const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t gradDesc, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionBwdDataAlgoPerf_t* perfResults) {
  using namespace tunedb::preload;
  auto heuristic = [&](int cap, int* count,
                       cudnnConvolutionBwdDataAlgoPerf_t* p) {
    return CallReal(real_bwd_data_v7, handle, filterDesc, diffDesc, convDesc,
                    gradDesc, cap, count, p);
  };
  return AnswerOrPass(
      ConvCall{ConvOp::kBackwardData, gradDesc, filterDesc, convDesc, diffDesc,
               {}},
      requestedAlgoCount, returnedAlgoCount, perfResults, heuristic, [&] {
        return heuristic(requestedAlgoCount, returnedAlgoCount, perfResults);
      });
}

extern "C" cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithm(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc,
    const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t dxDesc, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionBwdDataAlgoPerf_t* perfResults) {
  using namespace tunedb::preload;
  return AnswerOrPass(
      ConvCall{ConvOp::kBackwardData, dxDesc, wDesc, convDesc, dyDesc, {}},
      requestedAlgoCount, returnedAlgoCount, perfResults,
      [&](int cap, int* count, cudnnConvolutionBwdDataAlgoPerf_t* p) {
        return CallReal(real_bwd_data_v7, handle, wDesc, dyDesc, convDesc,
                        dxDesc, cap, count, p);
      },
      [&] {
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
  using namespace tunedb::preload;
  return AnswerOrPass(
      ConvCall{ConvOp::kBackwardData, dxDesc, wDesc, convDesc, dyDesc,
               workSpaceSizeInBytes},
      requestedAlgoCount, returnedAlgoCount, perfResults,
      [&](int cap, int* count, cudnnConvolutionBwdDataAlgoPerf_t* p) {
        return CallReal(real_bwd_data_v7, handle, wDesc, dyDesc, convDesc,
                        dxDesc, cap, count, p);
      },
      [&] {
        return CallReal(real_bwd_data_find_ex, handle, wDesc, w, dyDesc, dy,
                        convDesc, dxDesc, dx, requestedAlgoCount,
                        returnedAlgoCount, perfResults, workSpace,
                        workSpaceSizeInBytes);
      });
}

// --- Backward filter (w is dw, y is dy) ----------------------------------------

extern "C" cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc,
    const cudnnTensorDescriptor_t diffDesc,
    const cudnnConvolutionDescriptor_t convDesc,
    const cudnnFilterDescriptor_t gradDesc, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionBwdFilterAlgoPerf_t* perfResults) {
  using namespace tunedb::preload;
  auto heuristic = [&](int cap, int* count,
                       cudnnConvolutionBwdFilterAlgoPerf_t* p) {
    return CallReal(real_bwd_filter_v7, handle, srcDesc, diffDesc, convDesc,
                    gradDesc, cap, count, p);
  };
  return AnswerOrPass(
      ConvCall{ConvOp::kBackwardFilter, srcDesc, gradDesc, convDesc, diffDesc,
               {}},
      requestedAlgoCount, returnedAlgoCount, perfResults, heuristic, [&] {
        return heuristic(requestedAlgoCount, returnedAlgoCount, perfResults);
      });
}

extern "C" cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithm(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
    const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc,
    const cudnnFilterDescriptor_t dwDesc, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionBwdFilterAlgoPerf_t* perfResults) {
  using namespace tunedb::preload;
  return AnswerOrPass(
      ConvCall{ConvOp::kBackwardFilter, xDesc, dwDesc, convDesc, dyDesc, {}},
      requestedAlgoCount, returnedAlgoCount, perfResults,
      [&](int cap, int* count, cudnnConvolutionBwdFilterAlgoPerf_t* p) {
        return CallReal(real_bwd_filter_v7, handle, xDesc, dyDesc, convDesc,
                        dwDesc, cap, count, p);
      },
      [&] {
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
  using namespace tunedb::preload;
  return AnswerOrPass(
      ConvCall{ConvOp::kBackwardFilter, xDesc, dwDesc, convDesc, dyDesc,
               workSpaceSizeInBytes},
      requestedAlgoCount, returnedAlgoCount, perfResults,
      [&](int cap, int* count, cudnnConvolutionBwdFilterAlgoPerf_t* p) {
        return CallReal(real_bwd_filter_v7, handle, xDesc, dyDesc, convDesc,
                        dwDesc, cap, count, p);
      },
      [&] {
        return CallReal(real_bwd_filter_find_ex, handle, xDesc, x, dyDesc, y,
                        convDesc, dwDesc, dw, requestedAlgoCount,
                        returnedAlgoCount, perfResults, workSpace,
                        workSpaceSizeInBytes);
      });
}
