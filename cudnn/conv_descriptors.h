// Problem -> cuDNN descriptors: the one place where a ConvProblem becomes
// tensor, filter and convolution descriptors (cudnnSet*Descriptor), for the
// finder's CudnnConv and the client's CudnnDescriptors alike, so that what is
// searched and what is looked up describe the same convolution.
//
// Nd descriptors cover 2-D and 3-D problems; channels-last layouts use
// explicit packed strides and a CUDNN_TENSOR_NHWC filter; groups are set with
// cudnnSetConvolutionGroupCount; the output size cuDNN computes is checked
// against the problem's own.
//
// Thread safety: none; the descriptors belong to one thread at a time.
#ifndef TUNEDB_CUDNN_CONV_DESCRIPTORS_H_
#define TUNEDB_CUDNN_CONV_DESCRIPTORS_H_

#include <cudnn.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cudnn/cudnn_handles.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

// The descriptors of one problem, not owned, in forward terms (x input, w
// filter, y output, whatever the pass).
struct ConvDescriptorView {
  cudnnTensorDescriptor_t x = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnTensorDescriptor_t y = nullptr;
};

// The descriptors of one problem, owned.
struct ConvDescriptors {
  TensorDescriptor x;
  FilterDescriptor w;
  ConvolutionDescriptor conv;
  TensorDescriptor y;

  ConvDescriptorView view() const {
    return {x.get(), w.get(), conv.get(), y.get()};
  }
};

// Descriptors for `problem`. The convolution descriptor's math type is the
// problem's policy (PolicyMathType, common/math_policy.h): CUDNN_FMA_MATH
// when it allows no tensor cores (or is f32 without TF32), else the type's
// tensor-core math. INVALID_ARGUMENT if the problem is
// invalid or cuDNN computes another output size; a descriptor cuDNN refuses
// gives its status as cudnn_status.h maps it (INVALID_ARGUMENT for
// BAD_PARAM).
absl::StatusOr<ConvDescriptors> DescribeConv(const ConvProblem& problem);

// cudnnSetConvolutionMathType.
absl::Status SetMathType(cudnnConvolutionDescriptor_t conv, MathType math);

}  // namespace tunedb

#endif  // TUNEDB_CUDNN_CONV_DESCRIPTORS_H_
