#include "common/constraints_text.h"

#include "absl/strings/str_cat.h"

namespace tunedb {

std::string ConstraintsText(const Constraints& c) {
  return absl::StrCat(
      "det=", c.deterministic_only ? 1 : 0, " launch=",
      LaunchModeName(c.launch_mode), " notes=", c.excluded_numerical_notes,
      " ws=",
      c.max_workspace_bytes.has_value() ? absl::StrCat(*c.max_workspace_bytes)
                                        : std::string("any"));
}

}  // namespace tunedb
