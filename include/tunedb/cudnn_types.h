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

inline cudnnDataType_t ToCudnn(DataType t) {
  switch (t) {
    case DataType::kFloat:
      return CUDNN_DATA_FLOAT;
    case DataType::kHalf:
      return CUDNN_DATA_HALF;
    case DataType::kBFloat16:
      return CUDNN_DATA_BFLOAT16;
    case DataType::kDouble:
      return CUDNN_DATA_DOUBLE;
  }
  return CUDNN_DATA_FLOAT;
}

// nullopt for cuDNN types tunedb does not key (int8, fp8, ...).
inline std::optional<DataType> DataTypeFromCudnn(cudnnDataType_t t) {
  switch (t) {
    case CUDNN_DATA_FLOAT:
      return DataType::kFloat;
    case CUDNN_DATA_HALF:
      return DataType::kHalf;
    case CUDNN_DATA_BFLOAT16:
      return DataType::kBFloat16;
    case CUDNN_DATA_DOUBLE:
      return DataType::kDouble;
    default:
      return std::nullopt;
  }
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
