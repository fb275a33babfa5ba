// Ranking order and constraint-based choice.
#include "gtest/gtest.h"
#include "tunedb/record.h"

namespace tunedb {
namespace {

AlgoResult Ok(int algo, double ms, int64_t ws, bool det) {
  AlgoResult r;
  r.algo = algo;
  r.status = AlgoStatus::kOk;
  r.median_ms = ms;
  r.workspace_bytes = ws;
  r.deterministic = det;
  return r;
}

AlgoResult NotSupported(int algo) {
  AlgoResult r;
  r.algo = algo;
  r.status = AlgoStatus::kNotSupported;
  return r;
}

Record Ranking() {
  Record r;
  r.results = {NotSupported(6), Ok(1, 2.0, 0, true), Ok(5, 0.5, 1 << 30, true),
               Ok(3, 1.0, 0, false), Ok(2, 1.5, 64 << 20, true)};
  SortResults(r.results);
  return r;
}

TEST(RecordTest, SortPutsOkFastestFirstThenUnsupported) {
  Record r = Ranking();
  ASSERT_EQ(r.results.size(), 5u);
  EXPECT_EQ(r.results[0].algo, 5);
  EXPECT_EQ(r.results[1].algo, 3);
  EXPECT_EQ(r.results[2].algo, 2);
  EXPECT_EQ(r.results[3].algo, 1);
  EXPECT_EQ(r.results[4].status, AlgoStatus::kNotSupported);
}

struct ChoiceCase {
  const char* name;
  Constraints constraints;
  int expected_algo;  // -1: none
};

class ChooseTest : public testing::TestWithParam<ChoiceCase> {};

TEST_P(ChooseTest, PicksFastestMeetingConstraints) {
  auto choice = Choose(Ranking(), GetParam().constraints);
  if (GetParam().expected_algo < 0) {
    EXPECT_FALSE(choice.has_value());
  } else {
    ASSERT_TRUE(choice.has_value());
    EXPECT_EQ(choice->algo, GetParam().expected_algo);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, ChooseTest,
    testing::Values(
        ChoiceCase{"Unlimited", {}, 5},
        ChoiceCase{"NoWorkspace", {int64_t{0}, false}, 3},
        ChoiceCase{"SixtyFourMiB", {int64_t{64} << 20, false}, 3},
        ChoiceCase{"DeterministicNoWorkspace", {int64_t{0}, true}, 1},
        ChoiceCase{"Deterministic64MiB", {int64_t{64} << 20, true}, 2},
        ChoiceCase{"DeterministicUnlimited", {std::nullopt, true}, 5}),
    [](const auto& info) { return info.param.name; });

TEST(RecordTest, NegativeRecordChoosesNothing) {
  Record r;
  r.results = {NotSupported(0), NotSupported(1)};
  EXPECT_FALSE(r.supported());
  EXPECT_FALSE(Choose(r, {}).has_value());
  EXPECT_TRUE(Ranking().supported());
}

TEST(RecordTest, EnumNamesRoundTrip) {
  for (MathType m : {MathType::kDefault, MathType::kTensorOp,
                     MathType::kTensorOpAllowConversion, MathType::kFma}) {
    auto parsed = ParseMathType(MathTypeName(m));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, m);
  }
  for (AlgoStatus s : {AlgoStatus::kOk, AlgoStatus::kNotSupported,
                       AlgoStatus::kFailed}) {
    auto parsed = ParseAlgoStatus(AlgoStatusName(s));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, s);
  }
  EXPECT_FALSE(ParseMathType("quantum").ok());
}

}  // namespace
}  // namespace tunedb
