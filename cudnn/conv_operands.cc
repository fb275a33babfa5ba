#include "cudnn/conv_operands.h"

namespace tunedb {

std::vector<int64_t> OperandDims(const ConvProblem& p, ConvOperand operand) {
  std::vector<int64_t> dims;
  dims.reserve(p.spatial_dims + 2);
  switch (operand) {
    case ConvOperand::kX:
      dims = {p.n, p.c};
      for (int i = 0; i < p.spatial_dims; ++i) dims.push_back(p.input[i]);
      break;
    case ConvOperand::kW:
      dims = {p.k, p.c / p.groups};
      for (int i = 0; i < p.spatial_dims; ++i) dims.push_back(p.filter[i]);
      break;
    case ConvOperand::kY:
      dims = {p.n, p.k};
      for (int i = 0; i < p.spatial_dims; ++i) dims.push_back(p.OutputSize(i));
      break;
  }
  return dims;
}

int64_t OperandElements(const ConvProblem& p, ConvOperand operand) {
  int64_t elements = 1;
  for (int64_t d : OperandDims(p, operand)) elements *= d;
  return elements;
}

std::vector<int64_t> PackedStrides(const std::vector<int64_t>& dims,
                                   bool channels_last) {
  const int nb = static_cast<int>(dims.size());
  std::vector<int64_t> strides(nb);
  int64_t s = 1;
  if (!channels_last) {
    for (int i = nb - 1; i >= 0; --i) {
      strides[i] = s;
      s *= dims[i];
    }
    return strides;
  }
  strides[1] = s;
  s *= dims[1];
  for (int i = nb - 1; i >= 2; --i) {
    strides[i] = s;
    s *= dims[i];
  }
  strides[0] = s;
  return strides;
}

}  // namespace tunedb
