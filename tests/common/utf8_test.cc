#include "common/utf8.h"

#include <string>

#include "gtest/gtest.h"

namespace tunedb {
namespace {

TEST(Utf8Test, WellFormedTextHasNoBadByte) {
  EXPECT_EQ(FirstNonUtf8Byte(""), std::nullopt);
  EXPECT_EQ(FirstNonUtf8Byte("plain ascii {\"k\": 1}"), std::nullopt);
  // 2-, 3- and 4-byte sequences at the edges of their ranges.
  EXPECT_EQ(FirstNonUtf8Byte("\xC2\x80 \xDF\xBF \xE0\xA0\x80 \xED\x9F\xBF "
                             "\xEF\xBF\xBF \xF0\x90\x80\x80 \xF4\x8F\xBF\xBF"),
            std::nullopt);
  EXPECT_EQ(FirstNonUtf8Byte("NVIDIA H200 \xC2\xB5s"), std::nullopt);
}

TEST(Utf8Test, NamesTheFirstByteOfTheFirstBadSequence) {
  EXPECT_EQ(FirstNonUtf8Byte("ab\xFF" "cd"), 2u);        // never valid
  EXPECT_EQ(FirstNonUtf8Byte("ab\x80"), 2u);             // lone continuation
  EXPECT_EQ(FirstNonUtf8Byte("a\xC3"), 1u);              // truncated at the end
  EXPECT_EQ(FirstNonUtf8Byte("a\xE2\x82z"), 1u);         // truncated inside
  EXPECT_EQ(FirstNonUtf8Byte("ok \xC3\xA9 \xC0\xAF"), 6u);  // overlong '/'
}

TEST(Utf8Test, RefusesOverlongFormsSurrogatesAndCodePointsAboveTheMaximum) {
  EXPECT_EQ(FirstNonUtf8Byte("\xC1\xBF"), 0u);          // overlong 2-byte
  EXPECT_EQ(FirstNonUtf8Byte("\xE0\x9F\xBF"), 0u);      // overlong 3-byte
  EXPECT_EQ(FirstNonUtf8Byte("\xF0\x8F\xBF\xBF"), 0u);  // overlong 4-byte
  EXPECT_EQ(FirstNonUtf8Byte("\xED\xA0\x80"), 0u);      // U+D800
  EXPECT_EQ(FirstNonUtf8Byte("\xF4\x90\x80\x80"), 0u);  // U+110000
  EXPECT_EQ(FirstNonUtf8Byte("\xF5\x80\x80\x80"), 0u);
}

}  // namespace
}  // namespace tunedb
