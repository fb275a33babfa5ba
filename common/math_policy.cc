#include "common/math_policy.h"

#include <algorithm>

#include "common/data_type_traits.h"

namespace tunedb {

bool IsTf32Type(DataType type) { return DataTypeTraitsOf(type).tf32; }

bool KeyAllowsTf32(DataType type, bool allow_tensor_cores, bool allow_tf32) {
  return IsTf32Type(type) && allow_tensor_cores && allow_tf32;
}

bool TensorCoresAllowed(const ConvProblem& p) {
  return p.allow_tensor_cores && (!IsTf32Type(p.input_type) || p.allow_tf32);
}

bool InputDownConversionAllowed(const ConvProblem& p) {
  return !IsTf32Type(p.input_type) || p.allow_tf32;
}

MathType PolicyMathType(const ConvProblem& p) {
  if (!TensorCoresAllowed(p)) return MathType::kFma;
  const DataTypeTraits& t = DataTypeTraitsOf(p.input_type);
  return t.tensor_cores ? t.tensor_core_math : MathType::kDefault;
}

std::vector<MathType> SearchMathTypes(const ConvProblem& p) {
  const DataTypeTraits& t = DataTypeTraitsOf(p.input_type);
  if (!t.tensor_cores) return {MathType::kDefault};
  if (TensorCoresAllowed(p)) return {t.tensor_core_math, MathType::kFma};
  return {MathType::kFma};
}

bool MathTypeAllowed(const ConvProblem& p, MathType math) {
  const std::vector<MathType> searched = SearchMathTypes(p);
  if (std::find(searched.begin(), searched.end(), math) != searched.end()) {
    return true;
  }
  return math == MathType::kDefault && TensorCoresAllowed(p);
}

bool GraphPolicyAllows(const ConvProblem& p, uint32_t notes) {
  if ((notes & NoteBit(kNumericalNoteTensorCore)) != 0 &&
      !TensorCoresAllowed(p)) {
    return false;
  }
  if ((notes & NoteBit(kNumericalNoteDownConvertInputs)) != 0 &&
      !InputDownConversionAllowed(p)) {
    return false;
  }
  return true;
}

}  // namespace tunedb
