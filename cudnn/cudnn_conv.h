// CudnnConv: one convolution problem made concrete on the current CUDA device
// — cuDNN descriptors, device buffers filled with random data (never zeros),
// and the calls the finder, the GPU tests and the GPU benchmark need: Find
// (cudnnFind*AlgorithmEx), the heuristic (cudnnGet*Algorithm_v7), workspace
// sizes, one execution of a given algorithm and math type, and reading the
// output back to the host as floats.
//
// The three passes use the same three buffers: x (input activations), w
// (filter) and y (output activations). Forward reads x, w and writes y;
// backward-data reads w, dy (in y) and writes dx (in x); backward-filter reads
// x, dy (in y) and writes dw (in w). Every buffer starts random.
//
// Thread safety: none; one thread at a time (it owns descriptors bound to a
// cuDNN handle it does not own).
#ifndef TUNEDB_CUDNN_CUDNN_CONV_H_
#define TUNEDB_CUDNN_CUDNN_CONV_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "absl/status/statusor.h"
#include "cudnn/cudnn_handles.h"
#include "tunedb/cudnn_types.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

// The math types a search measures for a problem's policy:
//   f32, tensor cores and TF32 allowed: default (TF32 permitted) and FMA;
//   f32 otherwise: FMA only (no TF32);
//   f16/bf16 with tensor cores: tensor_op and FMA; without: FMA only;
//   f64: default.
std::vector<MathType> SearchMathTypes(const ConvProblem& problem);

// Relative L2 tolerance when comparing two algorithms' outputs for `problem`
// where the faster one ran with `math`.
double VerifyTolerance(const ConvProblem& problem, MathType math);

// Relative L2 difference ||a - b|| / max(||b||, tiny); +inf on size mismatch
// or non-finite values.
double RelativeL2(const std::vector<float>& a, const std::vector<float>& b);

class CudnnConv {
 public:
  // One entry as cuDNN reports it from Find or the heuristic.
  struct Entry {
    int algo = 0;
    cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
    float time_ms = 0;
    int64_t memory = 0;
    bool deterministic = false;
    MathType math = MathType::kDefault;           // math type set when found
    MathType reported_math = MathType::kDefault;  // perf.mathType
  };

  // Builds descriptors and random buffers (seeded) for `problem`. INVALID_
  // ARGUMENT if the problem is invalid or cuDNN rejects its descriptors,
  // RESOURCE_EXHAUSTED if the buffers do not fit.
  static absl::StatusOr<std::unique_ptr<CudnnConv>> Create(
      const ConvProblem& problem, cudnnHandle_t handle, cudaStream_t stream,
      uint64_t seed);

  const ConvProblem& problem() const { return problem_; }
  // Number of algorithms cuDNN defines for the problem's pass.
  int AlgoCount() const;
  // Bytes of the x, w and y buffers together.
  int64_t BufferBytes() const;

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
  // The pass's output computed on the CPU in double precision from the same
  // device inputs, in the same order as ReadOutput(). FAILED_PRECONDITION if
  // the problem needs more than `max_macs` multiply-accumulates.
  absl::StatusOr<std::vector<float>> CpuReference(int64_t max_macs);
  // Multiply-accumulates of the pass.
  int64_t MultiplyAccumulates() const;

 private:
  CudnnConv() = default;
  absl::Status Init(uint64_t seed);
  absl::Status SetMath(MathType math);
  absl::StatusOr<std::vector<float>> ReadBuffer(const DeviceBuffer& buffer,
                                               int64_t elems);
  absl::Status Fill(const DeviceBuffer& buffer, int64_t elements,
                    uint64_t seed);

  ConvProblem problem_;
  cudnnHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudnnDataType_t data_type_ = CUDNN_DATA_FLOAT;
  TensorDescriptor x_desc_, y_desc_;
  FilterDescriptor w_desc_;
  ConvolutionDescriptor conv_desc_;
  DeviceBuffer x_, w_, y_;
  int64_t x_elems_ = 0, w_elems_ = 0, y_elems_ = 0;
};

// Times one (algorithm, math type) of a CudnnConv: each sample is `batch`
// back-to-back runs between two CUDA events, divided by `batch`. The runs are
// captured once into a CUDA graph and replayed, so the host-side cost of the
// cuDNN call (tens of microseconds in cuDNN 9's legacy API) stays out of the
// GPU time; when capture is not possible the runs are launched directly and
// graphed() is false.
//
// Thread safety: none; it uses the conv's stream and must not outlive the
// conv or the workspace.
class RunTimer {
 public:
  static absl::StatusOr<std::unique_ptr<RunTimer>> Create(
      CudnnConv* conv, cudaStream_t stream, int algo, MathType math,
      void* workspace, size_t workspace_bytes, int batch);
  ~RunTimer();
  RunTimer(const RunTimer&) = delete;
  RunTimer& operator=(const RunTimer&) = delete;

  // One sample, in milliseconds per run.
  absl::StatusOr<double> Sample(cudaEvent_t start, cudaEvent_t stop);
  bool graphed() const { return exec_ != nullptr; }
  int batch() const { return batch_; }

 private:
  RunTimer() = default;
  absl::Status Launch();

  CudnnConv* conv_ = nullptr;
  cudaStream_t stream_ = nullptr;
  int algo_ = 0;
  MathType math_ = MathType::kDefault;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  int batch_ = 1;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace tunedb

#endif  // TUNEDB_CUDNN_CUDNN_CONV_H_
