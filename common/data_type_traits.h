// DataTypeTraits: the facts of each data type a key can hold (DataType), in
// one table, so that code asks the table instead of switching on the type:
// its text name, its element size, the compute (accumulation) types cuDNN
// accepts for it, its tensor-core math (whether it has any, which math type
// allows it, whether TF32 governs it), the type of cuDNN's alpha and beta
// scaling values for it, and the tolerance a result in it is verified to.
// What a problem's math policy permits is math_policy.h's, built on these.
//
// Header-only and free of CUDA and cuDNN, so every room (the preload's shim
// included) may use it. The cuDNN enum of each type is cudnn_types.h's.
//
// Thread safety: constants.
#ifndef TUNEDB_COMMON_DATA_TYPE_TRAITS_H_
#define TUNEDB_COMMON_DATA_TYPE_TRAITS_H_

#include <array>
#include <cstddef>

#include "absl/strings/string_view.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

struct DataTypeTraits {
  DataType type;
  // The key's text name ("f32", ...).
  absl::string_view name;
  // Element size in bytes.
  int bytes;
  // The compute types cuDNN accepts for data of this type (the first
  // compute_count entries), in the order an error message names them.
  std::array<DataType, 2> computes;
  int compute_count;
  // Whether cuDNN has tensor-core math for this type, and the math type
  // that permits it: default math for f32 (TF32), tensor_op for f16/bf16.
  bool tensor_cores;
  MathType tensor_core_math;
  // Whether the type's tensor-core math is TF32, so that allow_tf32 governs
  // it (f32 only; allow_tf32 means nothing for other types).
  bool tf32;
  // Whether cuDNN's alpha and beta scaling values are doubles for this type
  // (else floats).
  bool double_scaling;
  // Relative L2 tolerance of a result against a reference: under FMA math,
  // and under any other math type.
  double fma_tolerance;
  double tolerance;
};

// Every DataType, in the key's name order (f32, f16, bf16, f64). TF32 keeps
// 10 mantissa bits, and FFT/Winograd in f32 lose a little: f32's tolerance
// under other math than FMA is f16's.
// clang-format off
inline constexpr std::array<DataTypeTraits, 4> kDataTypeTraits = {{
  //  type                name  bytes computes                        count
  //    tensor_cores  tensor_core_math  tf32  double_scaling  tolerances
  {DataType::kFloat,    "f32",  4, {DataType::kFloat},                 1,
      true,  MathType::kDefault,  true,  false, 1e-3, 1e-2},
  {DataType::kHalf,     "f16",  2, {DataType::kFloat, DataType::kHalf}, 2,
      true,  MathType::kTensorOp, false, false, 1e-2, 1e-2},
  {DataType::kBFloat16, "bf16", 2, {DataType::kFloat},                 1,
      true,  MathType::kTensorOp, false, false, 5e-2, 5e-2},
  {DataType::kDouble,   "f64",  8, {DataType::kDouble},                1,
      false, MathType::kDefault,  false, true,  1e-9, 1e-9},
}};

// What DataTypeTraitsOf answers for a value outside the enum (a cast from a
// number): no name ("?"), no size, no compute type, no tensor cores.
inline constexpr DataTypeTraits kUnknownDataTypeTraits = {
  DataType{}, "?", 0, {}, 0,
      false, MathType::kDefault, false, false, 1e-2, 1e-2};
// clang-format on

constexpr const DataTypeTraits& DataTypeTraitsOf(DataType type) {
  for (const DataTypeTraits& t : kDataTypeTraits) {
    if (t.type == type) return t;
  }
  return kUnknownDataTypeTraits;
}

// Whether cuDNN accepts `compute` as the compute type of `data` data.
constexpr bool ComputeTypeAllowed(DataType data, DataType compute) {
  const DataTypeTraits& t = DataTypeTraitsOf(data);
  for (int i = 0; i < t.compute_count; ++i) {
    if (t.computes[static_cast<size_t>(i)] == compute) return true;
  }
  return false;
}

}  // namespace tunedb

#endif  // TUNEDB_COMMON_DATA_TYPE_TRAITS_H_
