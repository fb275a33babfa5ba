#include "common/caller_filters.h"

#include "common/math_policy.h"

namespace tunedb {

std::vector<CallerFilter> FrameworkFilters(DataType input_type) {
  const bool tf32 = IsTf32Type(input_type);
  Constraints no_down_convert;
  no_down_convert.excluded_numerical_notes =
      NoteBit(kNumericalNoteDownConvertInputs);
  Constraints deterministic = no_down_convert;
  deterministic.deterministic_only = true;
  deterministic.excluded_numerical_notes |=
      NoteBit(kNumericalNoteNondeterministic);
  Constraints no_tf32 = no_down_convert;
  no_tf32.excluded_numerical_notes |= NoteBit(kNumericalNoteTensorCore);
  Constraints safe = deterministic;  // every filter at once
  if (tf32) safe.excluded_numerical_notes |= NoteBit(kNumericalNoteTensorCore);
  Constraints safe_no_workspace = safe;
  safe_no_workspace.max_workspace_bytes = 0;
  std::vector<CallerFilter> out = {{Constraints{}, false, false},
                                   {no_down_convert, false, false},
                                   {deterministic, true, false}};
  if (tf32) out.push_back({no_tf32, true, false});
  out.push_back({safe, true, false});
  out.push_back({safe_no_workspace, true, true});
  return out;
}

}  // namespace tunedb
