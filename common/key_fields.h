// KeyFields: a key's text form taken apart field by field, for the rooms that
// match stored keys against query filters (the store and the CLI). Not part
// of the installed API: a client names a problem with ProblemKey.
//
// Thread safety: pure functions.
#ifndef TUNEDB_COMMON_KEY_FIELDS_H_
#define TUNEDB_COMMON_KEY_FIELDS_H_

#include <array>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunedb {

// Splits a canonical key (or part of one) into its fields, unescaped, e.g.
// {"gpu": "NVIDIA H200", "op": "fwd", ...}. Used to match query filters.
absl::StatusOr<std::map<std::string, std::string>> KeyFields(
    absl::string_view text);

// The names of every field of the text form, in canonical order (the last
// two only in graph-API keys).
const std::array<absl::string_view, 25>& KeyFieldNames();

}  // namespace tunedb

#endif  // TUNEDB_COMMON_KEY_FIELDS_H_
