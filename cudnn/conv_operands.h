// The three operands of a convolution pass and their host-side geometry:
// which operands each pass reads and which it writes (the roles, chosen here
// once for every piece of code that runs or checks a pass), their logical
// dims and element counts, and packed strides in a problem's layout.
//
// Host-only: no CUDA or cuDNN, so the CPU reference and its tests use it too.
//
// Thread safety: pure functions.
#ifndef TUNEDB_CUDNN_CONV_OPERANDS_H_
#define TUNEDB_CUDNN_CONV_OPERANDS_H_

#include <cstdint>
#include <vector>

#include "tunedb/problem.h"

namespace tunedb {

// The operands in forward terms, whatever the pass: x the input activations
// (dx for backward data), w the filter (dw for backward filter) and y the
// output activations (dy for the backward passes).
enum class ConvOperand { kX = 0, kW = 1, kY = 2 };
inline constexpr int kConvOperandCount = 3;

// What a pass reads and writes, in the operand order of cuDNN's legacy calls,
// which all take (in_a, in_b, conv, out):
//   forward:         (x, w)  -> y
//   backward data:   (w, dy) -> dx
//   backward filter: (x, dy) -> dw
struct PassRoles {
  ConvOperand in_a;
  ConvOperand in_b;
  ConvOperand out;
};

constexpr PassRoles RolesOf(ConvOp op) {
  switch (op) {
    case ConvOp::kBackwardData:
      return {ConvOperand::kW, ConvOperand::kY, ConvOperand::kX};
    case ConvOp::kBackwardFilter:
      return {ConvOperand::kX, ConvOperand::kY, ConvOperand::kW};
    case ConvOp::kForward:
      break;
  }
  return {ConvOperand::kX, ConvOperand::kW, ConvOperand::kY};
}

// Logical dims of an operand of a validated problem: x {n, c, input...},
// w {k, c / groups, filter...}, y {n, k, output...}.
std::vector<int64_t> OperandDims(const ConvProblem& problem,
                                 ConvOperand operand);

// Number of elements of an operand (the product of its dims).
int64_t OperandElements(const ConvProblem& problem, ConvOperand operand);

// Packed strides of a tensor with logical dims {N, C, spatial...} (or a
// filter's {K, C, spatial...}): row-major (NCHW, NCDHW, KCRS) or with the
// channels innermost (NHWC, NDHWC, KRSC).
std::vector<int64_t> PackedStrides(const std::vector<int64_t>& dims,
                                   bool channels_last);

}  // namespace tunedb

#endif  // TUNEDB_CUDNN_CONV_OPERANDS_H_
