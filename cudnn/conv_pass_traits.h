// Per-pass traits of cuDNN's legacy convolution API, written once for the
// code that links cuDNN (Pass<>, conv_pass.h) and for the drop-in's shim,
// which must not (it finds the program's cuDNN functions by name,
// preload/real_cudnn.h). PassTraits<kForward>, <kBackwardData> and
// <kBackwardFilter> name the pass's perf and algorithm types, its algorithm
// count, its operands' roles (RolesOf, conv_operands.h) and its five calls
// (Find*Algorithm, Find*AlgorithmEx, Get*Algorithm_v7, Get*WorkspaceSize,
// cudnnConvolution*), each as its function type and name, never its
// address: including this header references no cuDNN symbol.
//
// Header-only; needs only cudnn.h's declarations.
//
// Thread safety: constants.
#ifndef TUNEDB_CUDNN_CONV_PASS_TRAITS_H_
#define TUNEDB_CUDNN_CONV_PASS_TRAITS_H_

#include <cudnn.h>

#include "cudnn/conv_operands.h"
#include "tunedb/problem.h"

namespace tunedb {

// A cuDNN function by type and name.
template <typename F>
struct CudnnCall {
  using Fn = F;
  const char* name;
};

// The calls of each pass, as X(member, function). PassTraits expands them
// into CudnnCalls; Pass<> (conv_pass.h) into the linked functions.
#define TUNEDB_FORWARD_CALLS(X)                          \
  X(kFind, cudnnFindConvolutionForwardAlgorithm)         \
  X(kFindEx, cudnnFindConvolutionForwardAlgorithmEx)     \
  X(kGetV7, cudnnGetConvolutionForwardAlgorithm_v7)      \
  X(kWorkspace, cudnnGetConvolutionForwardWorkspaceSize) \
  X(kRun, cudnnConvolutionForward)
#define TUNEDB_BACKWARD_DATA_CALLS(X)                         \
  X(kFind, cudnnFindConvolutionBackwardDataAlgorithm)         \
  X(kFindEx, cudnnFindConvolutionBackwardDataAlgorithmEx)     \
  X(kGetV7, cudnnGetConvolutionBackwardDataAlgorithm_v7)      \
  X(kWorkspace, cudnnGetConvolutionBackwardDataWorkspaceSize) \
  X(kRun, cudnnConvolutionBackwardData)
#define TUNEDB_BACKWARD_FILTER_CALLS(X)                         \
  X(kFind, cudnnFindConvolutionBackwardFilterAlgorithm)         \
  X(kFindEx, cudnnFindConvolutionBackwardFilterAlgorithmEx)     \
  X(kGetV7, cudnnGetConvolutionBackwardFilterAlgorithm_v7)      \
  X(kWorkspace, cudnnGetConvolutionBackwardFilterWorkspaceSize) \
  X(kRun, cudnnConvolutionBackwardFilter)

#define TUNEDB_CUDNN_CALL(member, fn) \
  static constexpr CudnnCall<decltype(&fn)> member{#fn};

// What every pass has: its op and its operands' roles.
template <ConvOp kPassOp>
struct PassTraitsBase {
  static constexpr ConvOp kOp = kPassOp;
  static constexpr PassRoles kRoles = RolesOf(kPassOp);
  static constexpr ConvOperand kA = kRoles.in_a;
  static constexpr ConvOperand kB = kRoles.in_b;
  static constexpr ConvOperand kOut = kRoles.out;
};

template <ConvOp kOp>
struct PassTraits;

template <>
struct PassTraits<ConvOp::kForward> : PassTraitsBase<ConvOp::kForward> {
  using Perf = cudnnConvolutionFwdAlgoPerf_t;
  using Algo = cudnnConvolutionFwdAlgo_t;
  static constexpr int kAlgoCount = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
  TUNEDB_FORWARD_CALLS(TUNEDB_CUDNN_CALL)
};

template <>
struct PassTraits<ConvOp::kBackwardData>
    : PassTraitsBase<ConvOp::kBackwardData> {
  using Perf = cudnnConvolutionBwdDataAlgoPerf_t;
  using Algo = cudnnConvolutionBwdDataAlgo_t;
  static constexpr int kAlgoCount = CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
  TUNEDB_BACKWARD_DATA_CALLS(TUNEDB_CUDNN_CALL)
};

template <>
struct PassTraits<ConvOp::kBackwardFilter>
    : PassTraitsBase<ConvOp::kBackwardFilter> {
  using Perf = cudnnConvolutionBwdFilterAlgoPerf_t;
  using Algo = cudnnConvolutionBwdFilterAlgo_t;
  static constexpr int kAlgoCount = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
  TUNEDB_BACKWARD_FILTER_CALLS(TUNEDB_CUDNN_CALL)
};

#undef TUNEDB_CUDNN_CALL

// The operand `kOperand` of anything that holds x, w and y in forward terms
// (descriptors, buffers, an intercepted call): the calls take the roles'
// operands as (in_a, in_b, conv, out).
template <ConvOperand kOperand, typename Operands>
constexpr auto OperandOf(const Operands& operands) {
  if constexpr (kOperand == ConvOperand::kW) {
    return operands.w;
  } else if constexpr (kOperand == ConvOperand::kX) {
    return operands.x;
  } else {
    return operands.y;
  }
}

}  // namespace tunedb

#endif  // TUNEDB_CUDNN_CONV_PASS_TRAITS_H_
