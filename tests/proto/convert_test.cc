// The wire conversions of proto/convert.h: what FromProto refuses.
#include "proto/convert.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

v1::AlgoResult OkResult() {
  v1::AlgoResult r;
  r.set_algo(1);
  r.set_math_type(v1::MathType(1));
  r.set_status(v1::AlgoStatus(1));
  for (v1::Timing* t :
       {r.mutable_launch(), r.mutable_gpu(), r.mutable_host()}) {
    t->set_median_ms(0.5);
    t->set_spread_ms(0.01);
    t->set_samples(5);
  }
  return r;
}

// Found by the worker_frame fuzzer (tests/fuzz/regressions/worker_frame/):
// a NaN spread passed the "non-negative" check and broke the result's
// equality with itself, as a NaN median would break the ranking's order.
TEST(ConvertTest, ATimeThatIsNotAFiniteNumberIsRefused) {
  ASSERT_TRUE(FromProto(OkResult()).ok());
  for (double bad :
       {std::nan(""), std::numeric_limits<double>::infinity(), -1.0}) {
    v1::AlgoResult median = OkResult();
    median.mutable_gpu()->set_median_ms(bad);
    EXPECT_EQ(FromProto(median).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
    v1::AlgoResult spread = OkResult();
    spread.mutable_launch()->set_spread_ms(bad);
    EXPECT_EQ(FromProto(spread).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
    v1::AlgoResult legacy;  // a sender of the first revision: one time
    legacy.set_math_type(v1::MathType(1));
    legacy.set_status(v1::AlgoStatus(1));
    legacy.set_median_ms(bad);
    EXPECT_EQ(FromProto(legacy).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(ConvertTest, ConstraintsKeepTheirExcludedNumericalNotes) {
  Constraints c;
  c.max_workspace_bytes = 0;
  c.deterministic_only = true;
  c.excluded_numerical_notes = NoteBit(kNumericalNoteTensorCore) |
                               NoteBit(kNumericalNoteDownConvertInputs);
  v1::Constraints wire;
  ToProto(c, &wire);
  absl::StatusOr<Constraints> back = FromProto(wire);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->excluded_numerical_notes, c.excluded_numerical_notes);
  EXPECT_EQ(back->max_workspace_bytes, c.max_workspace_bytes);
  EXPECT_TRUE(back->deterministic_only);
}

TEST(ConvertTest, GraphProblemsAndEngineConfigsRoundTrip) {
  ConvProblem p = testing_util::TestProblem(8);
  p.api = ConvApi::kGraph;
  p.alignment = 8;
  v1::ConvProblem wire;
  ToProto(p, &wire);
  absl::StatusOr<ConvProblem> back = FromProto(wire);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, p);
  // An old sender sets no api: a legacy problem.
  wire.clear_api();
  wire.set_alignment(0);
  back = FromProto(wire);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->api, ConvApi::kLegacy);
  wire.set_api(v1::ConvApi(7));
  EXPECT_TRUE(absl::IsInvalidArgument(FromProto(wire).status()));

  AlgoResult r = *FromProto(OkResult());
  r.knobs = {Knob{3, 1}, Knob{9, -4}};
  r.numerical_notes = 17;
  r.behavior_notes = 1;
  r.plan = "{\"plan\":1}";
  v1::AlgoResult rw;
  ToProto(r, &rw);
  absl::StatusOr<AlgoResult> rb = FromProto(rw);
  ASSERT_TRUE(rb.ok()) << rb.status();
  EXPECT_EQ(*rb, r);
  rw.mutable_knobs(0)->set_type(-1);
  EXPECT_TRUE(absl::IsInvalidArgument(FromProto(rw).status()));
}

}  // namespace
}  // namespace tunedb
