// The per-pass calls of cuDNN's legacy convolution API, in the manner of
// PyTorch's Conv_v7.cpp: Pass<kForward>, Pass<kBackwardData> and
// Pass<kBackwardFilter> are the pass's traits (conv_pass_traits.h: perf and
// algorithm types, algorithm count, operand roles) with its calls bound to
// the linked cuDNN (Find*AlgorithmEx, Get*Algorithm_v7, Get*WorkspaceSize,
// cudnnConvolution*) and their operands put in their roles, and VisitPass()
// turns a runtime ConvOp into one of them, so code that runs a pass is
// written once:
//
//   VisitPass(op, [&](auto pass) {
//     using P = decltype(pass);
//     std::vector<typename P::Perf> perf(P::kAlgoCount);
//     return P::GetV7(handle, descriptors, P::kAlgoCount, &n, perf.data());
//   });
//
// Thread safety: stateless; the calls are as thread-safe as cuDNN's.
#ifndef TUNEDB_CUDNN_CONV_PASS_H_
#define TUNEDB_CUDNN_CONV_PASS_H_

#include <cudnn.h>

#include <cstddef>

#include "cudnn/conv_descriptors.h"
#include "cudnn/conv_operands.h"
#include "cudnn/conv_pass_traits.h"
#include "tunedb/problem.h"

namespace tunedb {

// Device pointers of the operands, in forward terms (see ConvOperand).
struct ConvBuffers {
  void* x = nullptr;
  void* w = nullptr;
  void* y = nullptr;
};

// A linked cuDNN function and its name, for error messages.
template <typename Fn>
struct NamedCall {
  Fn fn;
  const char* name;
};

// The calls of PassTraits<kOp>, bound to the linked cuDNN.
template <ConvOp kOp>
struct PassApi;

#define TUNEDB_NAMED_CALL(member, fn) \
  static constexpr NamedCall<decltype(&fn)> member{&fn, #fn};

template <>
struct PassApi<ConvOp::kForward> : PassTraits<ConvOp::kForward> {
  TUNEDB_FORWARD_CALLS(TUNEDB_NAMED_CALL)
};
template <>
struct PassApi<ConvOp::kBackwardData> : PassTraits<ConvOp::kBackwardData> {
  TUNEDB_BACKWARD_DATA_CALLS(TUNEDB_NAMED_CALL)
};
template <>
struct PassApi<ConvOp::kBackwardFilter> : PassTraits<ConvOp::kBackwardFilter> {
  TUNEDB_BACKWARD_FILTER_CALLS(TUNEDB_NAMED_CALL)
};

#undef TUNEDB_NAMED_CALL

// One pass: its traits plus its calls with the operands in their roles.
template <ConvOp kPassOp>
struct Pass : PassApi<kPassOp> {
  using Api = PassApi<kPassOp>;
  using Perf = typename Api::Perf;
  using Algo = typename Api::Algo;
  using Api::kA;
  using Api::kB;
  using Api::kOut;

  // Runs every algorithm on `b` (the output is overwritten).
  static cudnnStatus_t FindEx(cudnnHandle_t handle, const ConvDescriptorView& d,
                              const ConvBuffers& b, int requested,
                              int* returned, Perf* perf, void* workspace,
                              size_t workspace_bytes) {
    return Api::kFindEx.fn(handle, OperandOf<kA>(d), OperandOf<kA>(b),
                           OperandOf<kB>(d), OperandOf<kB>(b), d.conv,
                           OperandOf<kOut>(d), OperandOf<kOut>(b), requested,
                           returned, perf, workspace, workspace_bytes);
  }
  // cuDNN's heuristic ranking; nothing runs.
  static cudnnStatus_t GetV7(cudnnHandle_t handle, const ConvDescriptorView& d,
                             int requested, int* returned, Perf* perf) {
    return Api::kGetV7.fn(handle, OperandOf<kA>(d), OperandOf<kB>(d), d.conv,
                          OperandOf<kOut>(d), requested, returned, perf);
  }
  static cudnnStatus_t Workspace(cudnnHandle_t handle,
                                 const ConvDescriptorView& d, Algo algo,
                                 size_t* bytes) {
    return Api::kWorkspace.fn(handle, OperandOf<kA>(d), OperandOf<kB>(d),
                              d.conv, OperandOf<kOut>(d), algo, bytes);
  }
  // out = alpha * pass(in_a, in_b) + beta * out, on the handle's stream.
  static cudnnStatus_t Run(cudnnHandle_t handle, const void* alpha,
                           const ConvDescriptorView& d, const ConvBuffers& b,
                           Algo algo, void* workspace, size_t workspace_bytes,
                           const void* beta) {
    return Api::kRun.fn(handle, alpha, OperandOf<kA>(d), OperandOf<kA>(b),
                        OperandOf<kB>(d), OperandOf<kB>(b), d.conv, algo,
                        workspace, workspace_bytes, beta, OperandOf<kOut>(d),
                        OperandOf<kOut>(b));
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
