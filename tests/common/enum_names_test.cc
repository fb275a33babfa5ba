// EnumNames: the table behind every enum's Name and Parse.
#include "common/enum_names.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {
namespace {

using ::testing::HasSubstr;

enum class Fruit { kApple = 1, kPear = 2, kPlum = 3 };

constexpr EnumNames<Fruit, 4> kFruits("fruit", {{{Fruit::kApple, "apple"},
                                                 {Fruit::kApple, "malus"},
                                                 {Fruit::kPear, "pear"},
                                                 {Fruit::kPlum, "plum"}}});

TEST(EnumNamesTest, NameIsTheFirstNameOfAValue) {
  EXPECT_EQ(kFruits.Name(Fruit::kApple), "apple");
  EXPECT_EQ(kFruits.Name(Fruit::kPlum), "plum");
}

TEST(EnumNamesTest, ValueOutsideTheTableHasNoName) {
  EXPECT_EQ(kFruits.Name(static_cast<Fruit>(9)), "?");
  EXPECT_FALSE(kFruits.Contains(static_cast<Fruit>(9)));
  EXPECT_TRUE(kFruits.Contains(Fruit::kPear));
}

TEST(EnumNamesTest, ParseAcceptsNamesAndAliasesExactly) {
  EXPECT_EQ(*kFruits.Parse("apple"), Fruit::kApple);
  EXPECT_EQ(*kFruits.Parse("malus"), Fruit::kApple);
  EXPECT_EQ(kFruits.Find("pear"), Fruit::kPear);
  EXPECT_EQ(kFruits.Find("Pear"), std::nullopt) << "matching is exact";
  EXPECT_EQ(kFruits.Find(""), std::nullopt);
}

TEST(EnumNamesTest, NameListHasOneNamePerValueInTableOrder) {
  EXPECT_EQ(kFruits.NameList(), "apple, pear, plum");
}

TEST(EnumNamesTest, ParseOfAnUnknownNameSaysWhatAndListsTheNames) {
  absl::StatusOr<Fruit> fig = kFruits.Parse("fig");
  EXPECT_TRUE(absl::IsInvalidArgument(fig.status()));
  EXPECT_EQ(fig.status().message(),
            "unknown fruit 'fig' (expected one of apple, pear, plum)");
}

TEST(EnumNamesTest, DomainEnumsRoundTripThroughTheirNames) {
  for (ConvOp op :
       {ConvOp::kForward, ConvOp::kBackwardData, ConvOp::kBackwardFilter}) {
    EXPECT_EQ(*ParseConvOp(ConvOpName(op)), op);
  }
  for (MathType m : {MathType::kDefault, MathType::kTensorOp,
                     MathType::kTensorOpAllowConversion, MathType::kFma}) {
    EXPECT_EQ(*ParseMathType(MathTypeName(m)), m);
  }
  for (AlgoStatus s :
       {AlgoStatus::kOk, AlgoStatus::kNotSupported, AlgoStatus::kFailed}) {
    EXPECT_EQ(*ParseAlgoStatus(AlgoStatusName(s)), s);
  }
  EXPECT_THAT(std::string(ParseLayout("nchv").status().message()),
              HasSubstr("expected one of nchw, nhwc, ncdhw, ndhwc"));
  EXPECT_THAT(std::string(ParseMathType("tensor").status().message()),
              HasSubstr("unknown math type 'tensor'"));
}

}  // namespace
}  // namespace tunedb
