#include "common/job_id.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace tunedb {

namespace {

// `text` as an id named `field` in errors.
absl::Status ValidateId(absl::string_view field, absl::string_view text) {
  if (text.size() > kMaxJobIdBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": ", text.size(), " bytes, at most ", kMaxJobIdBytes,
        " allowed"));
  }
  for (char c : text) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) &&
        absl::string_view("._:@/-").find(c) == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ": only letters, digits and ._:@/- are allowed"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateJobId(absl::string_view job) {
  return ValidateId("job", job);
}

absl::Status ValidateProgramName(absl::string_view program) {
  return ValidateId("program", program);
}

}  // namespace tunedb
