// Fuzz target: the import line decoder (store/record_json.cc, RecordFromJson,
// which Import runs on every line). Properties: a decoded record has a valid
// key and id 0; encoding it and decoding the encoding gives the same record,
// whose encoding is the same text.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "store/record_json.h"
#include "tests/fuzz/fuzz_check.h"
#include "tunedb/record.h"

namespace {

// Every member of Record but the row id (which is not exported).
bool SameRecord(const tunedb::Record& a, const tunedb::Record& b) {
  return a.key == b.key && a.results == b.results &&
         a.measured_at_us == b.measured_at_us && a.host == b.host &&
         a.gpu_uuid == b.gpu_uuid && a.driver_version == b.driver_version &&
         a.finder == b.finder && a.repeats == b.repeats &&
         a.workspace_cap_bytes == b.workspace_cap_bytes &&
         a.search_ms == b.search_ms && a.verified == b.verified &&
         a.served_count == b.served_count &&
         a.timing_version == b.timing_version;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view line(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<tunedb::Record> record = tunedb::RecordFromJson(line);
  if (!record.ok()) {
    FUZZ_CHECK(record.status().code() == absl::StatusCode::kInvalidArgument);
    return 0;
  }
  FUZZ_CHECK(record->id == 0);
  FUZZ_CHECK(record->key.Validate().ok());
  const std::string encoded = tunedb::RecordToJson(*record);
  absl::StatusOr<tunedb::Record> again = tunedb::RecordFromJson(encoded);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(SameRecord(*again, *record));
  FUZZ_CHECK(tunedb::RecordToJson(*again) == encoded);
  return 0;
}
