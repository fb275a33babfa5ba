// cuDNN helpers: keys from cuDNN descriptors and the current device, a
// heuristic backed by cudnnGetConvolution*Algorithm_v7, and one call that
// returns what cudnnConvolutionForward / BackwardData / BackwardFilter need.
//
// Available when tunedb was built with cuDNN (TUNEDB_HAVE_CUDNN). Building a
// problem from descriptors, and descriptors from a problem, are host-only
// calls and need no GPU; CurrentDeviceKey, CudnnHeuristic and ChooseAlgo
// need a GPU and a cuDNN handle.
//
//   auto device = tunedb::CurrentDeviceKey().value();
//   auto algo = tunedb::ChooseAlgo(*client, handle, device,
//                                  tunedb::ConvOp::kForward, x, w, conv, y);
//   cudnnSetConvolutionMathType(conv, algo->math_type);
//   cudnnConvolutionForward(handle, ..., algo->fwd_algo, workspace,
//                           algo->workspace_bytes, ...);
//
// Thread safety: the functions are thread-safe as far as the cuDNN calls
// they make are (descriptors must not be changed concurrently). The
// heuristic serializes its own calls on its handle.
#ifndef TUNEDB_CUDNN_HELPERS_H_
#define TUNEDB_CUDNN_HELPERS_H_

#include <cudnn.h>

#include <cstddef>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "tunedb/client.h"
#include "tunedb/client_options.h"
#include "tunedb/cudnn_types.h"  // ToCudnn / FromCudnn for the key enums
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

// The problem that cuDNN descriptors describe, in forward terms whatever
// the op: x is the input (dx for backward data), w the filter (dw for
// backward filter), y the output (dy for the backward passes); y may be
// null (it is then not cross-checked). Tensors must be fully packed NCHW /
// NHWC (NCDHW / NDHWC). Tensor cores and TF32 are allowed unless the math
// type (`math`, else the convolution descriptor's) is CUDNN_FMA_MATH.
absl::StatusOr<ConvProblem> ProblemFromDescriptors(
    ConvOp op, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
    cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y,
    std::optional<cudnnMathType_t> math = std::nullopt);

// The DeviceKey of the current CUDA device and the loaded cuDNN
// (cudaGetDeviceProperties, cudnnGetVersion, cudaRuntimeGetVersion).
// UNAVAILABLE when there is no usable GPU.
absl::StatusOr<DeviceKey> CurrentDeviceKey();

// cuDNN descriptors for a problem (host-only), owned. They are built by the
// code that builds the daemon's search descriptors, so they describe the
// convolution that was measured; the convolution descriptor's math type is
// the problem's policy (CUDNN_FMA_MATH without tensor cores or TF32, else
// CUDNN_DEFAULT_MATH).
class CudnnDescriptors {
 public:
  static absl::StatusOr<std::unique_ptr<CudnnDescriptors>> Create(
      const ConvProblem& problem);
  ~CudnnDescriptors();

  cudnnTensorDescriptor_t x() const { return x_; }
  cudnnFilterDescriptor_t w() const { return w_; }
  cudnnConvolutionDescriptor_t conv() const { return conv_; }
  cudnnTensorDescriptor_t y() const { return y_; }

 private:
  CudnnDescriptors() = default;
  CudnnDescriptors(const CudnnDescriptors&) = delete;
  CudnnDescriptors& operator=(const CudnnDescriptors&) = delete;

  cudnnTensorDescriptor_t x_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  cudnnTensorDescriptor_t y_ = nullptr;
};

// A HeuristicFn for ClientOptions::heuristic: cuDNN's own ranking
// (cudnnGetConvolution*Algorithm_v7 on `handle`), first entry that meets
// the constraints. `handle` must outlive the client.
HeuristicFn CudnnHeuristic(cudnnHandle_t handle);

// What a cudnnConvolution* call needs. Only the member for the op asked is
// meaningful.
struct CudnnAlgo {
  Source source = Source::kNone;
  cudnnConvolutionFwdAlgo_t fwd_algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  cudnnConvolutionBwdDataAlgo_t bwd_data_algo =
      CUDNN_CONVOLUTION_BWD_DATA_ALGO_0;
  cudnnConvolutionBwdFilterAlgo_t bwd_filter_algo =
      CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0;
  cudnnMathType_t math_type = CUDNN_DEFAULT_MATH;
  size_t workspace_bytes = 0;
};

// The algorithm to launch for the convolution the descriptors describe (as
// in ProblemFromDescriptors) on `device`: the client's answer, else cuDNN's
// heuristic on `handle` (source kHeuristic). The workspace is the larger of
// the answer's and cudnnGetConvolution*WorkspaceSize's for the algorithm
// with its math type. Errors: an invalid descriptor set, or no algorithm at
// all. The caller sets `math_type` on its convolution descriptor.
absl::StatusOr<CudnnAlgo> ChooseAlgo(Client& client, cudnnHandle_t handle,
                                     const DeviceKey& device, ConvOp op,
                                     cudnnTensorDescriptor_t x,
                                     cudnnFilterDescriptor_t w,
                                     cudnnConvolutionDescriptor_t conv,
                                     cudnnTensorDescriptor_t y,
                                     const Constraints& constraints = {});

}  // namespace tunedb

#endif  // TUNEDB_CUDNN_HELPERS_H_
