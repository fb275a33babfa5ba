#include "common/driver_version.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tunedb {
namespace {

constexpr absl::string_view kCudaDriverApiPrefix = "cuda-driver-api-";
// Digits per number: enough for any driver's, and no overflow.
constexpr size_t kMaxDigits = 9;

// `text` as `min`..`max` dotted numbers of at most kMaxDigits digits each;
// nullopt otherwise.
std::optional<std::vector<int64_t>> DottedNumbers(absl::string_view text,
                                                  size_t min, size_t max) {
  std::vector<int64_t> numbers;
  for (absl::string_view part : absl::StrSplit(text, '.')) {
    if (part.empty() || part.size() > kMaxDigits) return std::nullopt;
    for (char c : part) {
      if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) {
        return std::nullopt;
      }
    }
    int64_t n = 0;
    if (!absl::SimpleAtoi(part, &n)) return std::nullopt;
    numbers.push_back(n);
  }
  if (numbers.size() < min || numbers.size() > max) return std::nullopt;
  return numbers;
}

}  // namespace

absl::StatusOr<DriverVersion> DriverVersion::Parse(absl::string_view text) {
  if (absl::StartsWith(text, kCudaDriverApiPrefix)) {
    if (std::optional<std::vector<int64_t>> numbers = DottedNumbers(
            text.substr(kCudaDriverApiPrefix.size()), 2, 2)) {
      return DriverVersion(Form::kCudaDriverApi, *std::move(numbers),
                           std::string(text));
    }
  } else if (std::optional<std::vector<int64_t>> numbers =
                 DottedNumbers(text, 2, 4)) {
    return DriverVersion(Form::kKernelModule, *std::move(numbers),
                         std::string(text));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "driver version \"", absl::CHexEscape(text),
      "\" cannot be read: expected the kernel module's dotted numbers "
      "(e.g. 580.65.06) or cuda-driver-api-MAJOR.MINOR (e.g. "
      "cuda-driver-api-13.0)"));
}

std::optional<int> DriverVersion::Compare(const DriverVersion& other) const {
  if (form_ != other.form_) return std::nullopt;
  const size_t n = std::max(numbers_.size(), other.numbers_.size());
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = i < numbers_.size() ? numbers_[i] : 0;
    const int64_t b = i < other.numbers_.size() ? other.numbers_[i] : 0;
    if (a != b) return a < b ? -1 : 1;
  }
  return 0;
}

bool DriverVersion::OlderThan(const DriverVersion& other) const {
  const std::optional<int> order = Compare(other);
  return order.has_value() && *order < 0;
}

bool DriverIsOlder(absl::string_view stored, absl::string_view serving) {
  absl::StatusOr<DriverVersion> a = DriverVersion::Parse(stored);
  absl::StatusOr<DriverVersion> b = DriverVersion::Parse(serving);
  return a.ok() && b.ok() && a->OlderThan(*b);
}

}  // namespace tunedb
