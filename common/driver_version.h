// DriverVersion: a record's driver_version text (where it was measured,
// DeviceInfo::driver_version) read as a version that can be ordered, so the
// daemon can tell a record measured under an older driver than the one it
// serves (docs/revalidation.md, "After a driver upgrade").
//
// Two forms are read: the kernel module's dotted numbers ("580.65.06") and,
// where that is unknown, the CUDA driver API's version
// ("cuda-driver-api-13.0"). Versions are ordered only within one form; any
// other text ("simulated", "") cannot be read and has no order.
//
// Thread safety: a value type; pure functions.
#ifndef TUNEDB_COMMON_DRIVER_VERSION_H_
#define TUNEDB_COMMON_DRIVER_VERSION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunedb {

class DriverVersion {
 public:
  enum class Form {
    kKernelModule,   // "580.65.06": 2 to 4 dotted numbers
    kCudaDriverApi,  // "cuda-driver-api-13.0": the API's major.minor
  };

  // INVALID_ARGUMENT, quoting `text` and naming the forms read, where it is
  // neither form.
  static absl::StatusOr<DriverVersion> Parse(absl::string_view text);

  Form form() const { return form_; }
  // The numbers, most significant first.
  const std::vector<int64_t>& numbers() const { return numbers_; }
  // As parsed.
  const std::string& text() const { return text_; }

  // <0, 0 or >0 as this is older than, the same as or newer than `other`
  // (missing trailing numbers count as 0: "580.65" is "580.65.0"); nullopt
  // where the two are of different forms.
  std::optional<int> Compare(const DriverVersion& other) const;
  // Of one form and older than `other`.
  bool OlderThan(const DriverVersion& other) const;

 private:
  DriverVersion(Form form, std::vector<int64_t> numbers, std::string text)
      : form_(form), numbers_(std::move(numbers)), text_(std::move(text)) {}

  Form form_;
  std::vector<int64_t> numbers_;
  std::string text_;
};

// Whether a record measured under driver `stored` was measured under an
// older driver than `serving`: false where either text cannot be read or
// their forms differ (no order, so no revalidation).
bool DriverIsOlder(absl::string_view stored, absl::string_view serving);

}  // namespace tunedb

#endif  // TUNEDB_COMMON_DRIVER_VERSION_H_
