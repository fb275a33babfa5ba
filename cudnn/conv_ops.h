// The operations of cuDNN's legacy convolution API on one problem's
// descriptors, each written once over the per-pass traits (conv_pass.h):
// Find (cudnnFind*AlgorithmEx), the heuristic (cudnnGet*Algorithm_v7),
// workspace sizes and one run. The descriptors' math type is used as set.
//
// Thread safety: as cuDNN's: one thread at a time per handle and descriptor
// set.
#ifndef TUNEDB_CUDNN_CONV_OPS_H_
#define TUNEDB_CUDNN_CONV_OPS_H_

#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cudnn/conv_descriptors.h"
#include "cudnn/conv_pass.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

// One algorithm as cuDNN reports it from Find or the heuristic.
struct AlgoPerf {
  int algo = 0;
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  float time_ms = 0;
  int64_t memory = 0;
  bool deterministic = false;
  MathType math = MathType::kDefault;  // perf.mathType
};

// Number of algorithms cuDNN defines for the pass.
int PassAlgoCount(ConvOp op);

// Measures every algorithm on `buffers` (the pass's output is overwritten),
// offering `workspace` (may be null with 0 bytes).
absl::StatusOr<std::vector<AlgoPerf>> FindAlgorithms(
    cudnnHandle_t handle, ConvOp op, const ConvDescriptorView& descriptors,
    const ConvBuffers& buffers, void* workspace, size_t workspace_bytes);

// cuDNN's heuristic ranking of the algorithms (nothing runs).
absl::StatusOr<std::vector<AlgoPerf>> HeuristicAlgorithms(
    cudnnHandle_t handle, ConvOp op, const ConvDescriptorView& descriptors);

// Workspace `algo` needs; FAILED_PRECONDITION if cuDNN does not support it.
absl::StatusOr<int64_t> AlgoWorkspaceSize(cudnnHandle_t handle, ConvOp op,
                                          const ConvDescriptorView& descriptors,
                                          int algo);

// One run of `algo` on the handle's stream (asynchronously): the pass's
// output = op(its inputs), with alpha 1 and beta 0 (as doubles for f64 data).
absl::Status RunAlgo(cudnnHandle_t handle, ConvOp op, DataType data_type,
                     const ConvDescriptorView& descriptors,
                     const ConvBuffers& buffers, int algo, void* workspace,
                     size_t workspace_bytes);

}  // namespace tunedb

#endif  // TUNEDB_CUDNN_CONV_OPS_H_
