// CudnnConv: one convolution problem made concrete on the current CUDA device
// — its cuDNN descriptors (DescribeConv), device buffers filled with random
// data (never zeros), and the calls the finder, the GPU tests and the GPU
// benchmark need: Find (cudnnFind*AlgorithmEx), the heuristic
// (cudnnGet*Algorithm_v7), workspace sizes, one execution of a given
// algorithm and math type, reading the output back to the host as floats, and
// the CPU reference of the same computation (cpu_reference.h).
//
// The three passes use the same three buffers: x (input activations), w
// (filter) and y (output activations). Forward reads x, w and writes y;
// backward-data reads w, dy (in y) and writes dx (in x); backward-filter reads
// x, dy (in y) and writes dw (in w) (RolesOf in conv_operands.h). Every buffer
// starts random.
//
// Thread safety: none; one thread at a time (it owns descriptors bound to a
// cuDNN handle it does not own).
#ifndef TUNEDB_CUDNN_CUDNN_CONV_H_
#define TUNEDB_CUDNN_CUDNN_CONV_H_

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "cudnn/conv_descriptors.h"
#include "cudnn/conv_operands.h"
#include "cudnn/conv_ops.h"
#include "cudnn/cudnn_handles.h"
#include "cudnn/device_values.h"
#include "cudnn/operand_arena.h"
#include "cudnn/output_windows.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

class CudnnConv {
 public:
  // One entry as cuDNN reports it from Find or the heuristic.
  using Entry = AlgoPerf;

  // Builds descriptors and random buffers (seeded) for `problem`. INVALID_
  // ARGUMENT if the problem is invalid or cuDNN rejects its descriptors,
  // RESOURCE_EXHAUSTED if the buffers do not fit.
  static absl::StatusOr<std::unique_ptr<CudnnConv>> Create(
      const ConvProblem& problem, cudnnHandle_t handle, cudaStream_t stream,
      uint64_t seed);
  // The same, filling the buffers from `values` (which must outlive the
  // call, not the conv): operand i gets the values from element
  // i * kOperandValueStride on. Cheap when `values` already holds enough.
  // With an `arena` (which must outlive the conv), the buffers are the
  // arena's instead of the conv's own.
  static absl::StatusOr<std::unique_ptr<CudnnConv>> Create(
      const ConvProblem& problem, cudnnHandle_t handle, cudaStream_t stream,
      DeviceValues& values, OperandArena* arena = nullptr);
  static constexpr int64_t kOperandValueStride = 7919;

  const ConvProblem& problem() const { return problem_; }
  // Number of algorithms cuDNN defines for the problem's pass.
  int AlgoCount() const { return PassAlgoCount(problem_.op); }

  // cudnnFind*AlgorithmEx with the descriptor's math type set to `math`,
  // offering `workspace` (may be null with bytes 0).
  absl::StatusOr<std::vector<Entry>> Find(MathType math, void* workspace,
                                          size_t workspace_bytes);
  // cudnnGet*Algorithm_v7 with math type `math` (no execution).
  absl::StatusOr<std::vector<Entry>> Heuristic(MathType math);
  // Workspace the algorithm needs under `math`; FAILED_PRECONDITION if cuDNN
  // does not support the combination.
  absl::StatusOr<int64_t> WorkspaceSize(int algo, MathType math);
  // Runs the pass once on the stream (asynchronously): output = op(inputs).
  absl::Status Run(int algo, MathType math, void* workspace,
                   size_t workspace_bytes);
  // Waits for the stream and copies the pass's output tensor to the host
  // (as floats, in memory order).
  absl::StatusOr<std::vector<float>> ReadOutput();
  // The same for the elements inside `windows` only (OutputWindows over the
  // output's element count), in order.
  absl::StatusOr<std::vector<float>> ReadOutputWindows(
      const std::vector<OutputWindow>& windows);
  // Elements of the pass's output tensor.
  int64_t OutputElements() const;
  // The device buffers, in forward terms (for graph-API plans run on them).
  ConvBuffers buffers() const;
  // The pass's output computed on the CPU in double precision from the same
  // device inputs, in the same order as ReadOutput(). FAILED_PRECONDITION if
  // the problem needs more than `max_macs` multiply-accumulates.
  absl::StatusOr<std::vector<float>> CpuReference(int64_t max_macs);

 private:
  CudnnConv() = default;
  absl::Status Init(DeviceValues& values, OperandArena* arena);
  absl::Status PrepareCall(MathType math, bool on_stream);
  // Waits for the stream and copies `operand` to the host as floats.
  absl::StatusOr<std::vector<float>> ReadOperand(ConvOperand operand);

  ConvProblem problem_;
  cudnnHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  ConvDescriptors descriptors_;
  std::array<DeviceBuffer, kConvOperandCount> owned_;  // x, w, y, or empty
  std::array<DeviceSpan, kConvOperandCount> buffers_;  // x, w, y
};

}  // namespace tunedb

#endif  // TUNEDB_CUDNN_CUDNN_CONV_H_
