// The CPU reference of a convolution pass: its output computed on the host,
// in double precision, from host copies of its inputs. The search compares a
// GPU result with it when no second cuDNN algorithm runs a problem.
//
// Host-only: no CUDA or cuDNN calls, so it is tested without a GPU.
//
// Thread safety: pure functions.
#ifndef TUNEDB_CUDNN_CPU_REFERENCE_H_
#define TUNEDB_CUDNN_CPU_REFERENCE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "tunedb/problem.h"

namespace tunedb {

// Multiply-accumulates of one pass of `problem` (the same for all three).
int64_t ConvMultiplyAccumulates(const ConvProblem& problem);

// problem.op computed from its two inputs (RolesOf(problem.op)). x, w and y
// hold the operands as floats, packed in the memory order of problem.layout
// (NCHW/NCDHW with a KCRS filter, NHWC/NDHWC with a KRSC filter); the pass's
// output operand is not read and may be empty. Returns the output operand in
// the same order, rounded to float. INVALID_ARGUMENT if the problem is
// invalid or an input has the wrong number of elements.
absl::StatusOr<std::vector<float>> CpuConvolution(const ConvProblem& problem,
                                                  const std::vector<float>& x,
                                                  const std::vector<float>& w,
                                                  const std::vector<float>& y);

}  // namespace tunedb

#endif  // TUNEDB_CUDNN_CPU_REFERENCE_H_
