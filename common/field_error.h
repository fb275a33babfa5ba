// FieldError: the one form of an error about one field of a key's text or
// of a problem's values, "<field>: <message>" (INVALID_ARGUMENT), shared by
// the key text's parser (key_text.cc) and Validate (problem.cc).
//
// Thread safety: a pure function.
#ifndef TUNEDB_COMMON_FIELD_ERROR_H_
#define TUNEDB_COMMON_FIELD_ERROR_H_

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace tunedb {

inline absl::Status FieldError(absl::string_view field,
                               absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", message));
}

}  // namespace tunedb

#endif  // TUNEDB_COMMON_FIELD_ERROR_H_
