// The math policy of a convolution problem, written once: what its
// allow_tensor_cores and allow_tf32 permit for its data type (the fp32/TF32
// rule). With tensor cores allowed, f16 and bf16 may use them (tensor_op
// math) and f32 may use them as TF32 only when TF32 is allowed too; f32
// without TF32 may not use tensor cores nor round its inputs (FMA math); f64
// has no tensor-core math. allow_tf32 means something for f32 only.
//
// Every piece of code that builds a key, sets a descriptor's math type,
// chooses the math types to search or filters engine configs asks these
// functions; the per-type facts are data_type_traits.h's.
//
// Thread safety: pure functions.
#ifndef TUNEDB_COMMON_MATH_POLICY_H_
#define TUNEDB_COMMON_MATH_POLICY_H_

#include <cstdint>
#include <vector>

#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

// Whether allow_tf32 governs `type`'s tensor-core math (f32 only).
bool IsTf32Type(DataType type);

// The key's allow_tf32 for a caller's settings: true only for a TF32 type
// with tensor cores and TF32 both allowed (ConvProblem::Validate refuses
// any other true).
bool KeyAllowsTf32(DataType type, bool allow_tensor_cores, bool allow_tf32);

// Whether the problem lets cuDNN use tensor cores: allowed, and for f32 only
// with TF32 allowed.
bool TensorCoresAllowed(const ConvProblem& problem);

// Whether the problem lets cuDNN round its inputs to a narrower type
// (cuDNN's DOWN_CONVERT_INPUTS note): not for f32 without TF32.
bool InputDownConversionAllowed(const ConvProblem& problem);

// The math type a problem's own descriptors get (lookups, heuristics), as a
// framework sets it (PyTorch's ConvolutionDescriptor): FMA when tensor
// cores are not allowed (TensorCoresAllowed), else the type's tensor-core
// math (tensor_op for f16 and bf16; default for f32 with TF32 and for f64).
// cuDNN's legacy heuristic asked under default math ranks f16 algorithms
// without tensor cores first.
MathType PolicyMathType(const ConvProblem& problem);

// The math types a search measures for a problem's policy:
//   f32, tensor cores and TF32 allowed: default (TF32 permitted) and FMA;
//   f32 otherwise: FMA only (no TF32);
//   f16/bf16 with tensor cores: tensor_op and FMA; without: FMA only;
//   f64: default.
std::vector<MathType> SearchMathTypes(const ConvProblem& problem);

// Whether a result under `math` obeys the problem's policy: one of the math
// types searched, or default math where tensor cores are allowed (cuDNN
// permits them under it, as for f16 and bf16).
bool MathTypeAllowed(const ConvProblem& problem, MathType math);

// Whether an engine config with these numerical notes (bit i: cuDNN's note
// i, record.h) is allowed by the problem's policy: no tensor-core note where
// tensor cores are not allowed, and no DOWN_CONVERT_INPUTS note where input
// down-conversion is not (TF32 shows as either).
bool GraphPolicyAllows(const ConvProblem& problem, uint32_t numerical_notes);

}  // namespace tunedb

#endif  // TUNEDB_COMMON_MATH_POLICY_H_
