#include "common/job_id.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace tunedb {

absl::Status ValidateJobId(absl::string_view job) {
  if (job.size() > kMaxJobIdBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "job: ", job.size(), " bytes, at most ", kMaxJobIdBytes, " allowed"));
  }
  for (char c : job) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) &&
        absl::string_view("._:@/-").find(c) == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          "job: only letters, digits and ._:@/- are allowed");
    }
  }
  return absl::OkStatus();
}

}  // namespace tunedb
