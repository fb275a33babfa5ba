// Per-pass traits of cuDNN's legacy convolution API, in the manner of
// PyTorch's Conv_v7.cpp: Pass<kForward>, Pass<kBackwardData> and
// Pass<kBackwardFilter> name the pass's perf and algorithm types, its
// algorithm count and its four calls (Find*AlgorithmEx, Get*Algorithm_v7,
// Get*WorkspaceSize, cudnnConvolution*), and VisitPass() turns a runtime
// ConvOp into one of them, so code that runs a pass is written once:
//
//   VisitPass(op, [&](auto pass) {
//     using P = decltype(pass);
//     std::vector<typename P::Perf> perf(P::kAlgoCount);
//     return P::GetV7(handle, descriptors, P::kAlgoCount, &n, perf.data());
//   });
//
// Every legacy call takes its operands as (in_a, in_b, conv, out); which of
// x, w and y those are is RolesOf(op) (conv_operands.h), chosen once.
//
// Thread safety: stateless; the calls are as thread-safe as cuDNN's.
#ifndef TUNEDB_CUDNN_CONV_PASS_H_
#define TUNEDB_CUDNN_CONV_PASS_H_

#include <cudnn.h>

#include <cstddef>

#include "cudnn/conv_descriptors.h"
#include "cudnn/conv_operands.h"
#include "tunedb/problem.h"

namespace tunedb {

// Device pointers of the operands, in forward terms (see ConvOperand).
struct ConvBuffers {
  void* x = nullptr;
  void* w = nullptr;
  void* y = nullptr;
};

// A cuDNN function and its name, for error messages.
template <typename Fn>
struct NamedCall {
  Fn fn;
  const char* name;
};

// The per-pass table: types, algorithm count and calls.
template <ConvOp kOp>
struct PassApi;

#define TUNEDB_NAMED_CALL(fn) \
  NamedCall<decltype(&fn)> { &fn, #fn }

template <>
struct PassApi<ConvOp::kForward> {
  using Perf = cudnnConvolutionFwdAlgoPerf_t;
  using Algo = cudnnConvolutionFwdAlgo_t;
  static constexpr int kAlgoCount = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
  static constexpr auto kFindEx =
      TUNEDB_NAMED_CALL(cudnnFindConvolutionForwardAlgorithmEx);
  static constexpr auto kGetV7 =
      TUNEDB_NAMED_CALL(cudnnGetConvolutionForwardAlgorithm_v7);
  static constexpr auto kWorkspace =
      TUNEDB_NAMED_CALL(cudnnGetConvolutionForwardWorkspaceSize);
  static constexpr auto kRun = TUNEDB_NAMED_CALL(cudnnConvolutionForward);
};

template <>
struct PassApi<ConvOp::kBackwardData> {
  using Perf = cudnnConvolutionBwdDataAlgoPerf_t;
  using Algo = cudnnConvolutionBwdDataAlgo_t;
  static constexpr int kAlgoCount = CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
  static constexpr auto kFindEx =
      TUNEDB_NAMED_CALL(cudnnFindConvolutionBackwardDataAlgorithmEx);
  static constexpr auto kGetV7 =
      TUNEDB_NAMED_CALL(cudnnGetConvolutionBackwardDataAlgorithm_v7);
  static constexpr auto kWorkspace =
      TUNEDB_NAMED_CALL(cudnnGetConvolutionBackwardDataWorkspaceSize);
  static constexpr auto kRun = TUNEDB_NAMED_CALL(cudnnConvolutionBackwardData);
};

template <>
struct PassApi<ConvOp::kBackwardFilter> {
  using Perf = cudnnConvolutionBwdFilterAlgoPerf_t;
  using Algo = cudnnConvolutionBwdFilterAlgo_t;
  static constexpr int kAlgoCount = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
  static constexpr auto kFindEx =
      TUNEDB_NAMED_CALL(cudnnFindConvolutionBackwardFilterAlgorithmEx);
  static constexpr auto kGetV7 =
      TUNEDB_NAMED_CALL(cudnnGetConvolutionBackwardFilterAlgorithm_v7);
  static constexpr auto kWorkspace =
      TUNEDB_NAMED_CALL(cudnnGetConvolutionBackwardFilterWorkspaceSize);
  static constexpr auto kRun =
      TUNEDB_NAMED_CALL(cudnnConvolutionBackwardFilter);
};

#undef TUNEDB_NAMED_CALL

// The descriptor of an operand (a filter descriptor for w, else a tensor
// descriptor).
template <ConvOperand kOperand>
auto OperandDescriptor(const ConvDescriptorView& d) {
  if constexpr (kOperand == ConvOperand::kW) {
    return d.w;
  } else if constexpr (kOperand == ConvOperand::kX) {
    return d.x;
  } else {
    return d.y;
  }
}

template <ConvOperand kOperand>
void* OperandBuffer(const ConvBuffers& b) {
  if constexpr (kOperand == ConvOperand::kW) {
    return b.w;
  } else if constexpr (kOperand == ConvOperand::kX) {
    return b.x;
  } else {
    return b.y;
  }
}

// One pass: the table plus its calls with the operands in their roles.
template <ConvOp kPassOp>
struct Pass : PassApi<kPassOp> {
  using Api = PassApi<kPassOp>;
  using Perf = typename Api::Perf;
  using Algo = typename Api::Algo;
  static constexpr ConvOp kOp = kPassOp;
  static constexpr PassRoles kRoles = RolesOf(kPassOp);
  static constexpr ConvOperand kA = kRoles.in_a;
  static constexpr ConvOperand kB = kRoles.in_b;
  static constexpr ConvOperand kOut = kRoles.out;

  // Runs every algorithm on `b` (the output is overwritten).
  static cudnnStatus_t FindEx(cudnnHandle_t handle, const ConvDescriptorView& d,
                              const ConvBuffers& b, int requested,
                              int* returned, Perf* perf, void* workspace,
                              size_t workspace_bytes) {
    return Api::kFindEx.fn(
        handle, OperandDescriptor<kA>(d), OperandBuffer<kA>(b),
        OperandDescriptor<kB>(d), OperandBuffer<kB>(b), d.conv,
        OperandDescriptor<kOut>(d), OperandBuffer<kOut>(b), requested, returned,
        perf, workspace, workspace_bytes);
  }
  // cuDNN's heuristic ranking; nothing runs.
  static cudnnStatus_t GetV7(cudnnHandle_t handle, const ConvDescriptorView& d,
                             int requested, int* returned, Perf* perf) {
    return Api::kGetV7.fn(
        handle, OperandDescriptor<kA>(d), OperandDescriptor<kB>(d), d.conv,
        OperandDescriptor<kOut>(d), requested, returned, perf);
  }
  static cudnnStatus_t Workspace(cudnnHandle_t handle,
                                 const ConvDescriptorView& d, Algo algo,
                                 size_t* bytes) {
    return Api::kWorkspace.fn(handle, OperandDescriptor<kA>(d),
                              OperandDescriptor<kB>(d), d.conv,
                              OperandDescriptor<kOut>(d), algo, bytes);
  }
  // out = alpha * pass(in_a, in_b) + beta * out, on the handle's stream.
  static cudnnStatus_t Run(cudnnHandle_t handle, const void* alpha,
                           const ConvDescriptorView& d, const ConvBuffers& b,
                           Algo algo, void* workspace, size_t workspace_bytes,
                           const void* beta) {
    return Api::kRun.fn(handle, alpha, OperandDescriptor<kA>(d),
                        OperandBuffer<kA>(b), OperandDescriptor<kB>(d),
                        OperandBuffer<kB>(b), d.conv, algo, workspace,
                        workspace_bytes, beta, OperandDescriptor<kOut>(d),
                        OperandBuffer<kOut>(b));
  }
};

// Calls visit(Pass<op>()) and returns what it returns. Problems are validated
// before they reach here (ConvProblem::Validate refuses other values), so any
// value outside the enum visits the forward pass.
template <typename Visitor>
decltype(auto) VisitPass(ConvOp op, Visitor&& visit) {
  switch (op) {
    case ConvOp::kBackwardData:
      return visit(Pass<ConvOp::kBackwardData>());
    case ConvOp::kBackwardFilter:
      return visit(Pass<ConvOp::kBackwardFilter>());
    case ConvOp::kForward:
      break;
  }
  return visit(Pass<ConvOp::kForward>());
}

}  // namespace tunedb

#endif  // TUNEDB_CUDNN_CONV_PASS_H_
