#include "cudnn/conv_descriptors.h"

#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/math_policy.h"
#include "common/status_macros.h"
#include "cudnn/conv_operands.h"
#include "cudnn/cudnn_status.h"
#include "tunedb/cudnn_types.h"

namespace tunedb {
namespace {

// cuDNN takes int arrays; a validated problem's sizes fit.
std::vector<int> ToInts(const std::vector<int64_t>& values) {
  return std::vector<int>(values.begin(), values.end());
}

std::vector<int> SpatialInts(const ConvProblem& p,
                             const ConvProblem::Dims& dims) {
  return std::vector<int>(dims.begin(), dims.begin() + p.spatial_dims);
}

absl::Status SetActivation(cudnnTensorDescriptor_t desc, const ConvProblem& p,
                           ConvOperand operand, const char* what) {
  const std::vector<int64_t> dims = OperandDims(p, operand);
  const std::vector<int> d = ToInts(dims);
  const std::vector<int> s =
      ToInts(PackedStrides(dims, IsChannelsLast(p.layout)));
  return CudnnStatusToAbsl(cudnnSetTensorNdDescriptor(
                               desc, ToCudnn(p.input_type),
                               static_cast<int>(d.size()), d.data(), s.data()),
                           what);
}

}  // namespace

absl::Status SetMathType(cudnnConvolutionDescriptor_t conv, MathType math) {
  return CudnnStatusToAbsl(cudnnSetConvolutionMathType(conv, ToCudnn(math)),
                           "cudnnSetConvolutionMathType");
}

absl::StatusOr<ConvDescriptors> DescribeConv(const ConvProblem& p) {
  RETURN_IF_ERROR(p.Validate());
  ConvDescriptors d;
  ASSIGN_OR_RETURN(d.x, CreateTensorDescriptor());
  ASSIGN_OR_RETURN(d.y, CreateTensorDescriptor());
  ASSIGN_OR_RETURN(d.w, CreateFilterDescriptor());
  ASSIGN_OR_RETURN(d.conv, CreateConvolutionDescriptor());
  const int nb = p.spatial_dims + 2;

  RETURN_IF_ERROR(SetActivation(d.x.get(), p, ConvOperand::kX,
                                "cudnnSetTensorNdDescriptor(x)"));
  const std::vector<int> wdims = ToInts(OperandDims(p, ConvOperand::kW));
  RETURN_IF_ERROR(CudnnStatusToAbsl(
      cudnnSetFilterNdDescriptor(
          d.w.get(), ToCudnn(p.input_type),
          IsChannelsLast(p.layout) ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, nb,
          wdims.data()),
      "cudnnSetFilterNdDescriptor"));

  const std::vector<int> pad = SpatialInts(p, p.padding);
  const std::vector<int> stride = SpatialInts(p, p.stride);
  const std::vector<int> dil = SpatialInts(p, p.dilation);
  RETURN_IF_ERROR(CudnnStatusToAbsl(
      cudnnSetConvolutionNdDescriptor(
          d.conv.get(), p.spatial_dims, pad.data(), stride.data(), dil.data(),
          p.mode == ConvMode::kConvolution ? CUDNN_CONVOLUTION
                                           : CUDNN_CROSS_CORRELATION,
          ToCudnn(p.compute_type)),
      "cudnnSetConvolutionNdDescriptor"));
  RETURN_IF_ERROR(CudnnStatusToAbsl(
      cudnnSetConvolutionGroupCount(d.conv.get(), static_cast<int>(p.groups)),
      "cudnnSetConvolutionGroupCount"));
  RETURN_IF_ERROR(SetMathType(d.conv.get(), PolicyMathType(p)));

  std::vector<int> ydims(nb);
  RETURN_IF_ERROR(CudnnStatusToAbsl(
      cudnnGetConvolutionNdForwardOutputDim(d.conv.get(), d.x.get(), d.w.get(),
                                            nb, ydims.data()),
      "cudnnGetConvolutionNdForwardOutputDim"));
  for (int i = 0; i < p.spatial_dims; ++i) {
    if (ydims[2 + i] != p.OutputSize(i)) {
      return absl::InvalidArgumentError(
          absl::StrCat("cuDNN output size ", ydims[2 + i], " != expected ",
                       p.OutputSize(i), " in spatial dimension ", i));
    }
  }
  RETURN_IF_ERROR(SetActivation(d.y.get(), p, ConvOperand::kY,
                                "cudnnSetTensorNdDescriptor(y)"));
  return d;
}

}  // namespace tunedb
