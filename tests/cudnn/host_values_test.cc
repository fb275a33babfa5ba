// Host encodings of the data types: known bit patterns decode to their
// values, and each type's random elements are the f32 ones rounded to it.
#include "cudnn/host_values.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace tunedb {
namespace {

template <typename T>
std::vector<unsigned char> Bytes(T v) {
  std::vector<unsigned char> b(sizeof v);
  std::memcpy(b.data(), &v, sizeof v);
  return b;
}

TEST(HostValuesTest, KnownPatternsDecode) {
  EXPECT_EQ(ElementsToFloats(DataType::kFloat, Bytes(0.25f)),
            std::vector<float>{0.25f});
  EXPECT_EQ(ElementsToFloats(DataType::kDouble, Bytes(-0.5)),
            std::vector<float>{-0.5f});
  EXPECT_EQ(ElementsToFloats(DataType::kHalf,
                             Bytes<uint16_t>(0x3c00)),  // 1
            std::vector<float>{1.0f});
  EXPECT_EQ(ElementsToFloats(DataType::kHalf, Bytes<uint16_t>(0xc000)),
            std::vector<float>{-2.0f});
  EXPECT_EQ(ElementsToFloats(DataType::kHalf, Bytes<uint16_t>(0x0001)),
            std::vector<float>{std::ldexp(1.0f, -24)});  // smallest subnormal
  EXPECT_EQ(ElementsToFloats(DataType::kBFloat16, Bytes<uint16_t>(0x3f80)),
            std::vector<float>{1.0f});
  EXPECT_EQ(ElementsToFloats(DataType::kBFloat16, Bytes<uint16_t>(0xc000)),
            std::vector<float>{-2.0f});
}

TEST(HostValuesTest, EachTypeHoldsTheF32ValuesRounded) {
  constexpr int64_t kCount = 4096;
  constexpr uint64_t kSeed = 7;
  const std::vector<float> f32 = ElementsToFloats(
      DataType::kFloat, RandomElements(DataType::kFloat, kCount, kSeed));
  ASSERT_EQ(f32.size(), static_cast<size_t>(kCount));
  struct Case {
    DataType type;
    int bytes;
    float relative;  // half an ulp
  } cases[] = {{DataType::kFloat, 4, 0},
               {DataType::kDouble, 8, 0},
               {DataType::kHalf, 2, std::ldexp(1.0f, -11)},
               {DataType::kBFloat16, 2, std::ldexp(1.0f, -8)}};
  for (const Case& c : cases) {
    const std::vector<unsigned char> bytes =
        RandomElements(c.type, kCount, kSeed);
    EXPECT_EQ(bytes.size(), static_cast<size_t>(kCount * c.bytes));
    const std::vector<float> got = ElementsToFloats(c.type, bytes);
    ASSERT_EQ(got.size(), f32.size());
    bool nonzero = false;
    for (size_t i = 0; i < got.size(); ++i) {
      nonzero = nonzero || got[i] != 0;
      EXPECT_GE(got[i], -1.0f);
      EXPECT_LE(got[i], 1.0f);
      // Half's subnormals are spaced 2^-24 apart.
      EXPECT_LE(std::fabs(got[i] - f32[i]),
                std::fabs(f32[i]) * c.relative + std::ldexp(1.0f, -25))
          << DataTypeName(c.type) << " element " << i;
    }
    EXPECT_TRUE(nonzero) << DataTypeName(c.type);
  }
}

TEST(HostValuesTest, SeededAndReproducible) {
  // One seed gives the same bytes each time; another seed, others.
  EXPECT_EQ(RandomElements(DataType::kHalf, 64, 3),
            RandomElements(DataType::kHalf, 64, 3));
  EXPECT_NE(RandomElements(DataType::kHalf, 64, 3),
            RandomElements(DataType::kHalf, 64, 4));
}

}  // namespace
}  // namespace tunedb
