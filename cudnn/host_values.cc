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

template <typename T>
void Store(T v, unsigned char* dst) {
  std::memcpy(dst, &v, sizeof v);
}
template <typename T>
T Load(const unsigned char* src) {
  T v;
  std::memcpy(&v, src, sizeof v);
  return v;
}

// Each data type's host conversion from and to float, DataTypeBytes(type)
// bytes an element.
struct Codec {
  DataType type;
  void (*encode)(float v, unsigned char* dst);
  float (*decode)(const unsigned char* src);
};
constexpr Codec kCodecs[] = {
    {DataType::kFloat, [](float v, unsigned char* d) { Store(v, d); },
     [](const unsigned char* s) { return Load<float>(s); }},
    {DataType::kHalf,
     [](float v, unsigned char* d) { Store(FloatToHalf(v), d); },
     [](const unsigned char* s) { return HalfToFloat(Load<uint16_t>(s)); }},
    {DataType::kBFloat16,
     [](float v, unsigned char* d) { Store(FloatToBf16(v), d); },
     [](const unsigned char* s) { return Bf16ToFloat(Load<uint16_t>(s)); }},
    {DataType::kDouble,
     [](float v, unsigned char* d) { Store(static_cast<double>(v), d); },
     [](const unsigned char* s) {
       return static_cast<float>(Load<double>(s));
     }},
};

// A value outside the enum: nothing is written, and elements read as f32.
const Codec* CodecOf(DataType type) {
  for (const Codec& c : kCodecs) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

void Encode(DataType type, float v, unsigned char* dst) {
  if (const Codec* c = CodecOf(type)) c->encode(v, dst);
}

float Decode(DataType type, const unsigned char* src) {
  const Codec* c = CodecOf(type);
  return c != nullptr ? c->decode(src) : Load<float>(src);
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
