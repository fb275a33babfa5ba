// DataTypeTraits: one entry per DataType, with the facts the code asks of it
// (name, size, compute types, tensor-core math, scaling type, tolerances),
// and what the key's own functions answer from it.
#include "common/data_type_traits.h"

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

using ::testing::HasSubstr;

constexpr DataType kAll[] = {DataType::kFloat, DataType::kHalf,
                             DataType::kBFloat16, DataType::kDouble};

TEST(DataTypeTraitsTest, EveryTypeHasOneEntryOfItsOwn) {
  std::set<DataType> seen;
  for (const DataTypeTraits& t : kDataTypeTraits) {
    EXPECT_TRUE(seen.insert(t.type).second) << t.name;
    EXPECT_EQ(&DataTypeTraitsOf(t.type), &t);
  }
  EXPECT_EQ(seen, std::set<DataType>(std::begin(kAll), std::end(kAll)));
}

TEST(DataTypeTraitsTest, NamesAndSizes) {
  EXPECT_EQ(DataTypeTraitsOf(DataType::kFloat).name, "f32");
  EXPECT_EQ(DataTypeTraitsOf(DataType::kHalf).name, "f16");
  EXPECT_EQ(DataTypeTraitsOf(DataType::kBFloat16).name, "bf16");
  EXPECT_EQ(DataTypeTraitsOf(DataType::kDouble).name, "f64");
  EXPECT_EQ(DataTypeTraitsOf(DataType::kFloat).bytes, 4);
  EXPECT_EQ(DataTypeTraitsOf(DataType::kHalf).bytes, 2);
  EXPECT_EQ(DataTypeTraitsOf(DataType::kBFloat16).bytes, 2);
  EXPECT_EQ(DataTypeTraitsOf(DataType::kDouble).bytes, 8);
  for (DataType t : kAll) {
    EXPECT_EQ(DataTypeName(t), DataTypeTraitsOf(t).name);
    EXPECT_EQ(DataTypeBytes(t), DataTypeTraitsOf(t).bytes);
    EXPECT_EQ(*ParseDataType(DataTypeTraitsOf(t).name), t);
  }
}

TEST(DataTypeTraitsTest, ComputeTypesCudnnAccepts) {
  const DataType f32 = DataType::kFloat, f16 = DataType::kHalf,
                 bf16 = DataType::kBFloat16, f64 = DataType::kDouble;
  EXPECT_TRUE(ComputeTypeAllowed(f32, f32));
  EXPECT_FALSE(ComputeTypeAllowed(f32, f16));
  EXPECT_FALSE(ComputeTypeAllowed(f32, f64));
  EXPECT_TRUE(ComputeTypeAllowed(f16, f32));
  EXPECT_TRUE(ComputeTypeAllowed(f16, f16));
  EXPECT_FALSE(ComputeTypeAllowed(f16, bf16));
  EXPECT_TRUE(ComputeTypeAllowed(bf16, f32));
  EXPECT_FALSE(ComputeTypeAllowed(bf16, bf16));
  EXPECT_FALSE(ComputeTypeAllowed(bf16, f16));
  EXPECT_TRUE(ComputeTypeAllowed(f64, f64));
  EXPECT_FALSE(ComputeTypeAllowed(f64, f32));
}

TEST(DataTypeTraitsTest, TensorCoreMathAndScaling) {
  const DataTypeTraits& f32 = DataTypeTraitsOf(DataType::kFloat);
  EXPECT_TRUE(f32.tensor_cores);
  EXPECT_TRUE(f32.tf32);
  EXPECT_EQ(f32.tensor_core_math, MathType::kDefault);
  for (DataType half : {DataType::kHalf, DataType::kBFloat16}) {
    const DataTypeTraits& t = DataTypeTraitsOf(half);
    EXPECT_TRUE(t.tensor_cores) << t.name;
    EXPECT_FALSE(t.tf32) << t.name;
    EXPECT_EQ(t.tensor_core_math, MathType::kTensorOp) << t.name;
    EXPECT_FALSE(t.double_scaling) << t.name;
  }
  const DataTypeTraits& f64 = DataTypeTraitsOf(DataType::kDouble);
  EXPECT_FALSE(f64.tensor_cores);
  EXPECT_FALSE(f64.tf32);
  EXPECT_TRUE(f64.double_scaling);
  EXPECT_FALSE(f32.double_scaling);
}

TEST(DataTypeTraitsTest, Tolerances) {
  EXPECT_EQ(DataTypeTraitsOf(DataType::kFloat).fma_tolerance, 1e-3);
  EXPECT_EQ(DataTypeTraitsOf(DataType::kFloat).tolerance, 1e-2);
  EXPECT_EQ(DataTypeTraitsOf(DataType::kHalf).fma_tolerance, 1e-2);
  EXPECT_EQ(DataTypeTraitsOf(DataType::kHalf).tolerance, 1e-2);
  EXPECT_EQ(DataTypeTraitsOf(DataType::kBFloat16).fma_tolerance, 5e-2);
  EXPECT_EQ(DataTypeTraitsOf(DataType::kBFloat16).tolerance, 5e-2);
  EXPECT_EQ(DataTypeTraitsOf(DataType::kDouble).fma_tolerance, 1e-9);
  EXPECT_EQ(DataTypeTraitsOf(DataType::kDouble).tolerance, 1e-9);
}

TEST(DataTypeTraitsTest, AValueOutsideTheEnumHasNoFacts) {
  const DataTypeTraits& t = DataTypeTraitsOf(static_cast<DataType>(9));
  EXPECT_EQ(&t, &kUnknownDataTypeTraits);
  EXPECT_EQ(t.name, "?");
  EXPECT_EQ(t.bytes, 0);
  EXPECT_EQ(t.compute_count, 0);
  EXPECT_FALSE(t.tensor_cores);
  EXPECT_FALSE(t.tf32);
  EXPECT_EQ(DataTypeBytes(static_cast<DataType>(9)), 0);
  EXPECT_EQ(DataTypeName(static_cast<DataType>(9)), "?");
  EXPECT_FALSE(ComputeTypeAllowed(static_cast<DataType>(9), DataType::kFloat));
}

// Validate names the compute types a data type accepts, from the table.
TEST(DataTypeTraitsTest, ValidateNamesTheAcceptedComputeTypes) {
  struct Case {
    DataType data, compute;
    const char* message;
  } cases[] = {
      {DataType::kFloat, DataType::kHalf, "f32 data needs f32 compute"},
      {DataType::kHalf, DataType::kDouble, "f16 data needs f32 or f16 compute"},
      {DataType::kBFloat16, DataType::kHalf, "bf16 data needs f32 compute"},
      {DataType::kDouble, DataType::kFloat, "f64 data needs f64 compute"},
  };
  for (const Case& c : cases) {
    ConvProblem p = testing_util::TestKey(1).problem;
    p.input_type = p.output_type = c.data;
    p.compute_type = c.compute;
    p.allow_tf32 = false;
    const absl::Status s = p.Validate();
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << c.message;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.message));
    p.compute_type = DataTypeTraitsOf(c.data).computes[0];
    EXPECT_TRUE(p.Validate().ok()) << c.message;
  }
}

}  // namespace
}  // namespace tunedb
