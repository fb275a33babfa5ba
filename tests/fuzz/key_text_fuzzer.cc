// Fuzz target: the key-text parser (common/problem.cc). Arbitrary bytes are
// parsed as a whole key, as a device half and as a problem half, and split
// into fields. Properties: whatever parses is valid, renders to a text that
// parses back to the same value and renders to the same text again; the
// fields of a key's text are its values, unescaped.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "common/key_fields.h"
#include "common/valid_key.h"
#include "tests/fuzz/fuzz_check.h"
#include "tunedb/problem.h"

namespace {

// Parse -> ToText -> Parse gives the value again, and the same text.
template <typename T>
void CheckRoundTrip(const T& value) {
  FUZZ_CHECK(value.Validate().ok());
  const std::string text = value.ToText();
  absl::StatusOr<T> again = T::Parse(text);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(*again == value);
  FUZZ_CHECK(again->ToText() == text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);

  if (absl::StatusOr<tunedb::ProblemKey> key = tunedb::ProblemKey::Parse(text);
      key.ok()) {
    CheckRoundTrip(*key);
    const std::string canonical = key->ToText();
    absl::StatusOr<tunedb::ValidKey> valid = tunedb::ValidKey::Make(*key);
    FUZZ_CHECK(valid.ok());
    FUZZ_CHECK(valid->text() == canonical);
    FUZZ_CHECK(valid->hash() == key->Hash());
    FUZZ_CHECK(valid->HashText().size() == 16);
    // The canonical text names every field once (the last two, api and
    // align, only for graph-API keys), and the GPU model comes back
    // unescaped.
    absl::StatusOr<std::map<std::string, std::string>> fields =
        tunedb::KeyFields(canonical);
    FUZZ_CHECK(fields.ok());
    const auto& names = tunedb::KeyFieldNames();
    const size_t expected =
        key->problem.api == tunedb::ConvApi::kGraph ? names.size()
                                                    : names.size() - 2;
    FUZZ_CHECK(fields->size() == expected);
    for (size_t i = 0; i < expected; ++i) {
      FUZZ_CHECK(fields->count(std::string(names[i])) == 1);
    }
    FUZZ_CHECK(fields->at("gpu") == key->device.gpu_model);
    // The halves parse on their own.
    CheckRoundTrip(key->device);
    CheckRoundTrip(key->problem);
  }
  if (absl::StatusOr<tunedb::DeviceKey> device = tunedb::DeviceKey::Parse(text);
      device.ok()) {
    CheckRoundTrip(*device);
  }
  if (absl::StatusOr<tunedb::ConvProblem> problem =
          tunedb::ConvProblem::Parse(text);
      problem.ok()) {
    CheckRoundTrip(*problem);
    // A valid problem's tensors are not empty (their sizes fit in int64).
    FUZZ_CHECK(problem->InputElements() > 0);
    FUZZ_CHECK(problem->FilterElements() > 0);
    FUZZ_CHECK(problem->OutputElements() > 0);
  }
  // Query filters split any text; an error is fine, a crash is not.
  (void)tunedb::KeyFields(text);
  return 0;
}
