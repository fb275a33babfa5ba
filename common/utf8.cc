#include "common/utf8.h"

#include <cstdint>

namespace tunedb {
namespace {

// The length of the well-formed sequence at text[i], or 0 (Unicode's table
// of well-formed byte sequences, "Table 3-7").
size_t SequenceLength(absl::string_view text, size_t i) {
  const auto byte = [&](size_t k) {
    return static_cast<uint8_t>(text[i + k]);
  };
  const uint8_t b0 = byte(0);
  if (b0 < 0x80) return 1;
  size_t n = 0;
  uint8_t lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;  // no overlong form
    if (b0 == 0xED) hi = 0x9F;  // no surrogate
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;  // no overlong form
    if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (byte(1) < lo || byte(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(k) < 0x80 || byte(k) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

std::optional<size_t> FirstNonUtf8Byte(absl::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const size_t n = SequenceLength(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

}  // namespace tunedb
