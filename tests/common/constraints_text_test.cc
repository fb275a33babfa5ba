#include "common/constraints_text.h"

#include <gtest/gtest.h>

#include "common/pin_file.h"

namespace tunedb {
namespace {

TEST(ConstraintsTextTest, DefaultsReadAsAnyWorkspace) {
  EXPECT_EQ(ConstraintsText(Constraints{}),
            "det=0 launch=direct notes=0 ws=any");
}

TEST(ConstraintsTextTest, EveryFieldIsWritten) {
  Constraints c;
  c.deterministic_only = true;
  c.launch_mode = LaunchMode::kGraph;
  c.excluded_numerical_notes = 5;
  c.max_workspace_bytes = 1 << 20;
  EXPECT_EQ(ConstraintsText(c), "det=1 launch=graph notes=5 ws=1048576");
}

TEST(ConstraintsTextTest, ZeroWorkspaceIsNotAny) {
  Constraints c;
  c.max_workspace_bytes = 0;
  EXPECT_EQ(ConstraintsText(c), "det=0 launch=direct notes=0 ws=0");
}

TEST(ConstraintsTextTest, FieldsOutsideThePinSlotAreNotPartOfIt) {
  Constraints a;
  Constraints b;
  b.compile_horizon_calls = 7;
  b.loads_stored_plans = true;
  EXPECT_EQ(ConstraintsText(a), ConstraintsText(b));
}

TEST(ConstraintsTextTest, PinSlotTextIsTheSameText) {
  Constraints c;
  c.deterministic_only = true;
  c.launch_mode = LaunchMode::kGraph;
  c.excluded_numerical_notes = 2;
  c.max_workspace_bytes = 4096;
  EXPECT_EQ(PinSlot::Of(c).ToText(), ConstraintsText(c));
  EXPECT_EQ(PinSlot::Of(c).ToText(), "det=1 launch=graph notes=2 ws=4096");
}

}  // namespace
}  // namespace tunedb
