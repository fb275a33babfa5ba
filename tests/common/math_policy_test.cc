// The math policy (the fp32/TF32 rule), case by case for every data type and
// every allow_tensor_cores / allow_tf32 a valid key can hold.
#include "common/math_policy.h"

#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

ConvProblem Problem(DataType type, bool tc, bool tf32) {
  ConvProblem p = testing_util::TestKey(1).problem;
  p.input_type = p.output_type = type;
  p.compute_type =
      type == DataType::kDouble ? DataType::kDouble : DataType::kFloat;
  p.allow_tensor_cores = tc;
  p.allow_tf32 = tf32;
  return p;
}

using Maths = std::vector<MathType>;
const MathType kDef = MathType::kDefault, kTensorOp = MathType::kTensorOp,
               kConv = MathType::kTensorOpAllowConversion,
               kFma = MathType::kFma;
const uint32_t kTc = NoteBit(kNumericalNoteTensorCore);
const uint32_t kDown = NoteBit(kNumericalNoteDownConvertInputs);

TEST(MathPolicyTest, OnlyF32IsGovernedByTf32) {
  EXPECT_TRUE(IsTf32Type(DataType::kFloat));
  EXPECT_FALSE(IsTf32Type(DataType::kHalf));
  EXPECT_FALSE(IsTf32Type(DataType::kBFloat16));
  EXPECT_FALSE(IsTf32Type(DataType::kDouble));
}

TEST(MathPolicyTest, KeyAllowsTf32ForF32WithTensorCoresAndTf32Only) {
  for (DataType t : {DataType::kFloat, DataType::kHalf, DataType::kBFloat16,
                     DataType::kDouble}) {
    for (bool tc : {false, true}) {
      for (bool tf32 : {false, true}) {
        const bool want = t == DataType::kFloat && tc && tf32;
        EXPECT_EQ(KeyAllowsTf32(t, tc, tf32), want)
            << DataTypeName(t) << " tc=" << tc << " tf32=" << tf32;
        // What it gives is a key Validate accepts.
        EXPECT_TRUE(Problem(t, tc, KeyAllowsTf32(t, tc, tf32)).Validate().ok())
            << DataTypeName(t) << " tc=" << tc << " tf32=" << tf32;
      }
    }
  }
}

// Every policy a valid key can hold, and what each function answers for it.
struct Case {
  DataType type;
  bool tc, tf32;
  bool tensor_cores, down_convert;
  MathType policy_math;
  Maths searched;
  Maths also_allowed;  // beyond the searched ones
};

const Case kCases[] = {
    {DataType::kFloat, true, true, true, true, kDef, {kDef, kFma}, {}},
    {DataType::kFloat, true, false, false, false, kFma, {kFma}, {}},
    {DataType::kFloat, false, false, false, false, kFma, {kFma}, {}},
    {DataType::kHalf, true, false, true, true, kTensorOp, {kTensorOp, kFma},
     {kDef}},
    {DataType::kHalf, false, false, false, true, kFma, {kFma}, {}},
    {DataType::kBFloat16,
     true,
     false,
     true,
     true,
     kTensorOp,
     {kTensorOp, kFma},
     {kDef}},
    {DataType::kBFloat16, false, false, false, true, kFma, {kFma}, {}},
    {DataType::kDouble, true, false, true, true, kDef, {kDef}, {}},
    {DataType::kDouble, false, false, false, true, kFma, {kDef}, {}},
};

TEST(MathPolicyTest, EachPolicy) {
  for (const Case& c : kCases) {
    const ConvProblem p = Problem(c.type, c.tc, c.tf32);
    ASSERT_TRUE(p.Validate().ok());
    SCOPED_TRACE(::testing::Message() << DataTypeName(c.type) << " tc=" << c.tc
                                      << " tf32=" << c.tf32);
    EXPECT_EQ(TensorCoresAllowed(p), c.tensor_cores);
    EXPECT_EQ(InputDownConversionAllowed(p), c.down_convert);
    EXPECT_EQ(PolicyMathType(p), c.policy_math);
    EXPECT_EQ(SearchMathTypes(p), c.searched);
    for (MathType m : {kDef, kTensorOp, kConv, kFma}) {
      bool want = false;
      for (MathType a : c.searched) want = want || a == m;
      for (MathType a : c.also_allowed) want = want || a == m;
      EXPECT_EQ(MathTypeAllowed(p, m), want) << MathTypeName(m);
    }
    EXPECT_TRUE(GraphPolicyAllows(p, 0));
    EXPECT_TRUE(GraphPolicyAllows(p, NoteBit(kNumericalNoteNondeterministic)));
    EXPECT_EQ(GraphPolicyAllows(p, kTc), c.tensor_cores);
    EXPECT_EQ(GraphPolicyAllows(p, kDown), c.down_convert);
    EXPECT_EQ(GraphPolicyAllows(p, kTc | kDown),
              c.tensor_cores && c.down_convert);
  }
}

TEST(MathPolicyTest, AValueOutsideTheEnumSearchesDefaultMath) {
  ConvProblem p = Problem(DataType::kFloat, true, false);
  p.input_type = static_cast<DataType>(9);
  EXPECT_EQ(SearchMathTypes(p), Maths({kDef}));
  EXPECT_FALSE(IsTf32Type(p.input_type));
  EXPECT_TRUE(TensorCoresAllowed(p));
}

}  // namespace
}  // namespace tunedb
