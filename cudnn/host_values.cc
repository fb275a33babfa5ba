#include "cudnn/host_values.h"

#include <cstring>

namespace tunedb {
namespace {

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffffu;
  if (exp <= 0) {  // subnormal or zero in half
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const int shift = 14 - exp;
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  uint32_t half = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half;
  return static_cast<uint16_t>(sign | half);
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) |
             ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

float Bf16ToFloat(uint16_t b) {
  const uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// splitmix64: fast, seedable, good enough for test data.
uint64_t NextRandom(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void Encode(DataType type, float v, unsigned char* dst) {
  switch (type) {
    case DataType::kFloat:
      std::memcpy(dst, &v, 4);
      break;
    case DataType::kDouble: {
      const double d = v;
      std::memcpy(dst, &d, 8);
      break;
    }
    case DataType::kHalf: {
      const uint16_t h = FloatToHalf(v);
      std::memcpy(dst, &h, 2);
      break;
    }
    case DataType::kBFloat16: {
      const uint16_t b = FloatToBf16(v);
      std::memcpy(dst, &b, 2);
      break;
    }
  }
}

float Decode(DataType type, const unsigned char* src) {
  switch (type) {
    case DataType::kDouble: {
      double d;
      std::memcpy(&d, src, 8);
      return static_cast<float>(d);
    }
    case DataType::kHalf: {
      uint16_t h;
      std::memcpy(&h, src, 2);
      return HalfToFloat(h);
    }
    case DataType::kBFloat16: {
      uint16_t b;
      std::memcpy(&b, src, 2);
      return Bf16ToFloat(b);
    }
    case DataType::kFloat:
      break;
  }
  float f;
  std::memcpy(&f, src, 4);
  return f;
}

}  // namespace

std::vector<unsigned char> RandomElements(DataType type, int64_t count,
                                          uint64_t seed) {
  uint64_t state = seed * 0x2545f4914f6cdd1dull + 1;
  const int elem = DataTypeBytes(type);
  std::vector<unsigned char> bytes(static_cast<size_t>(count) * elem);
  for (int64_t i = 0; i < count; ++i) {
    const float v =
        static_cast<float>(static_cast<double>(NextRandom(state) >> 11) *
                               (2.0 / 9007199254740992.0) -
                           1.0);
    Encode(type, v, bytes.data() + i * elem);
  }
  return bytes;
}

std::vector<float> ElementsToFloats(DataType type,
                                    const std::vector<unsigned char>& bytes) {
  const int elem = DataTypeBytes(type);
  std::vector<float> out(bytes.size() / elem);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = Decode(type, bytes.data() + i * elem);
  }
  return out;
}

}  // namespace tunedb
