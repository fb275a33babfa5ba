// Mappings between tunedb's key enums and cuDNN's, shared by the client's
// descriptor helpers and the daemon's cuDNN finder. Header-only; needs
// cudnn.h.
//
// Thread safety: pure functions.
#ifndef TUNEDB_CUDNN_TYPES_H_
#define TUNEDB_CUDNN_TYPES_H_

#include <cudnn.h>

#include <optional>

#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

// Each key data type and its cuDNN type, both ways from one table.
struct CudnnDataTypePair {
  DataType type;
  cudnnDataType_t cudnn;
};
inline constexpr CudnnDataTypePair kCudnnDataTypes[] = {
    {DataType::kFloat, CUDNN_DATA_FLOAT},
    {DataType::kHalf, CUDNN_DATA_HALF},
    {DataType::kBFloat16, CUDNN_DATA_BFLOAT16},
    {DataType::kDouble, CUDNN_DATA_DOUBLE},
};

// CUDNN_DATA_FLOAT for a value outside the enum.
inline cudnnDataType_t ToCudnn(DataType t) {
  for (const CudnnDataTypePair& p : kCudnnDataTypes) {
    if (p.type == t) return p.cudnn;
  }
  return CUDNN_DATA_FLOAT;
}

// nullopt for cuDNN types tunedb does not key (int8, fp8, ...).
inline std::optional<DataType> DataTypeFromCudnn(cudnnDataType_t t) {
  for (const CudnnDataTypePair& p : kCudnnDataTypes) {
    if (p.cudnn == t) return p.type;
  }
  return std::nullopt;
}

inline cudnnMathType_t ToCudnn(MathType m) {
  switch (m) {
    case MathType::kDefault:
      return CUDNN_DEFAULT_MATH;
    case MathType::kTensorOp:
      return CUDNN_TENSOR_OP_MATH;
    case MathType::kTensorOpAllowConversion:
      return CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    case MathType::kFma:
      return CUDNN_FMA_MATH;
  }
  return CUDNN_DEFAULT_MATH;
}

inline MathType FromCudnn(cudnnMathType_t m) {
  switch (m) {
    case CUDNN_TENSOR_OP_MATH:
      return MathType::kTensorOp;
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION:
      return MathType::kTensorOpAllowConversion;
    case CUDNN_FMA_MATH:
      return MathType::kFma;
    default:
      return MathType::kDefault;
  }
}

}  // namespace tunedb

#endif  // TUNEDB_CUDNN_TYPES_H_
