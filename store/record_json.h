// The export format: one Record as one line of JSON ("JSON lines"), written
// by Export and read back by Import. Versioned and strictly validated; see
// docs/export-format.md for the fields.
//
//   {"format":"tunedb-record","version":2,"key":"kv=1 gpu=...",
//    "measured_at_us":...,"host":...,...,"results":[{"algo":1,...},...]}
//
// The row id is not exported (it belongs to one database).
//
// Thread safety: free functions on values.
#ifndef TUNEDB_STORE_RECORD_JSON_H_
#define TUNEDB_STORE_RECORD_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tunedb/record.h"

namespace tunedb {

// Value of the "format" member of every line.
inline constexpr absl::string_view kRecordJsonFormat = "tunedb-record";
// Value of the "version" member this build writes; it reads 1 (one GPU time
// per result, read as a stale record) and 2 (launch, GPU and host time).
inline constexpr int kRecordJsonVersion = 2;

// One line, without a trailing newline. Strings that are not valid UTF-8 have
// the bad bytes replaced by U+FFFD.
std::string RecordToJson(const Record& record);

// Parses and validates one line: the format marker and version, the key
// (ProblemKey::Parse), every member present with the right type, enum names
// known, times, counts and sizes not negative, and no unknown members.
// INVALID_ARGUMENT naming the offending member, e.g. "results[2].median_ms".
// The returned record has id 0.
absl::StatusOr<Record> RecordFromJson(absl::string_view line);

}  // namespace tunedb

#endif  // TUNEDB_STORE_RECORD_JSON_H_
