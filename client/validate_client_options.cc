#include "client/validate_client_options.h"

#include "absl/time/time.h"
#include "common/job_id.h"
#include "common/status_macros.h"

namespace tunedb {

absl::Status ValidateClientOptions(const ClientOptions& options) {
  if (options.address.empty()) {
    return absl::InvalidArgumentError("ClientOptions.address is empty");
  }
  if (options.cache_capacity < 0) {
    return absl::InvalidArgumentError("ClientOptions.cache_capacity < 0");
  }
  if (options.lookup_deadline < absl::ZeroDuration() ||
      options.tune_deadline <= absl::ZeroDuration() ||
      options.background_tune_deadline <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "ClientOptions deadlines must be positive (lookup_deadline may be 0)");
  }
  if (options.negative_ttl < absl::ZeroDuration() ||
      options.refresh_interval < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "ClientOptions.negative_ttl and refresh_interval must be >= 0");
  }
  if (options.reconnect_backoff_min <= absl::ZeroDuration() ||
      options.reconnect_backoff_max < options.reconnect_backoff_min) {
    return absl::InvalidArgumentError(
        "ClientOptions needs 0 < reconnect_backoff_min <= "
        "reconnect_backoff_max");
  }
  if (options.background_queue_capacity < 1) {
    return absl::InvalidArgumentError(
        "ClientOptions.background_queue_capacity must be >= 1");
  }
  RETURN_IF_ERROR(ValidateJobId(options.job_id));
  return ValidateProgramName(options.program);
}

}  // namespace tunedb
