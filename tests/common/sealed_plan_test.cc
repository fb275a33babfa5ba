#include "common/sealed_plan.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

class SealedPlanTest : public ::testing::Test {
 protected:
  ProblemKey key_ = testing_util::TestKey(5);
  std::vector<Knob> knobs_ = {Knob{3, 2}};
  std::string plan_ = "{\"cudnn\":\"a serialized plan\",\"n\":12345}";
  std::string sealed_ = SealPlan(key_, 70, knobs_, plan_);
};

TEST_F(SealedPlanTest, OpensForTheKeyAndConfigItWasSealedFor) {
  absl::StatusOr<absl::string_view> plan =
      OpenSealedPlan(sealed_, key_, 70, knobs_);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(*plan, plan_);
}

TEST_F(SealedPlanTest, ACutShortPlanIsDataLoss) {
  for (size_t keep : {sealed_.size() - 1, sealed_.size() / 2, size_t{20}}) {
    EXPECT_EQ(
        OpenSealedPlan(sealed_.substr(0, keep), key_, 70, knobs_).status().code(),
        absl::StatusCode::kDataLoss)
        << keep;
  }
}

TEST_F(SealedPlanTest, AnEditedPlanIsRefusedWhateverByteChanged) {
  const size_t body = sealed_.find('\n') + 1;
  for (size_t i = body; i < sealed_.size(); ++i) {
    std::string edited = sealed_;
    edited[i] ^= 0x01;
    EXPECT_FALSE(OpenSealedPlan(edited, key_, 70, knobs_).ok()) << i;
  }
  std::string longer = sealed_ + " ";
  EXPECT_EQ(OpenSealedPlan(longer, key_, 70, knobs_).status().code(),
            absl::StatusCode::kDataLoss);
}

TEST_F(SealedPlanTest, AnotherKeysOrConfigsPlanIsRefusedNamingBoth) {
  ProblemKey other = key_;
  other.device.cudnn_version += 1;
  absl::Status s = OpenSealedPlan(sealed_, other, 70, knobs_).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("another key"), absl::string_view::npos);
  EXPECT_FALSE(OpenSealedPlan(sealed_, key_, 71, knobs_).ok());
  EXPECT_FALSE(OpenSealedPlan(sealed_, key_, 70, {Knob{3, 3}}).ok());
}

TEST_F(SealedPlanTest, AnUnsealedPlanIsInvalidArgument) {
  EXPECT_EQ(OpenSealedPlan(plan_, key_, 70, knobs_).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(SealedPlanTest, UnsealClearsAPlanItCannotOpenAndSealPlansSealsOnce) {
  std::vector<AlgoResult> results(2);
  results[0].algo = 70;
  results[0].knobs = knobs_;
  results[0].plan = plan_;
  SealPlans(key_, results);
  EXPECT_EQ(results[0].plan, sealed_);
  EXPECT_TRUE(results[1].plan.empty());
  SealPlans(key_, results);  // already sealed: unchanged
  EXPECT_EQ(results[0].plan, sealed_);
  AlgoResult r = results[0];
  ASSERT_TRUE(UnsealPlan(key_, r).ok());
  EXPECT_EQ(r.plan, plan_);
  r.plan = sealed_.substr(0, sealed_.size() - 3);
  EXPECT_FALSE(UnsealPlan(key_, r).ok());
  EXPECT_TRUE(r.plan.empty());
}

}  // namespace
}  // namespace tunedb
