// UTF-8 validity: where a byte string stops being well-formed UTF-8 (RFC
// 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
//
// Thread safety: a pure function.
#ifndef TUNEDB_COMMON_UTF8_H_
#define TUNEDB_COMMON_UTF8_H_

#include <cstddef>
#include <optional>

#include "absl/strings/string_view.h"

namespace tunedb {

// The offset of the first byte of the first ill-formed sequence in `text`,
// or nullopt when all of it is well-formed UTF-8.
std::optional<size_t> FirstNonUtf8Byte(absl::string_view text);

}  // namespace tunedb

#endif  // TUNEDB_COMMON_UTF8_H_
