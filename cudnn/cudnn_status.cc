#include "cudnn/cudnn_status.h"

#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace tunedb {
namespace {

// Payload key marking errors after which the process must restart.
constexpr char kFatalPayload[] = "tunedb.dev/fatal-device-error";

}  // namespace

bool IsCudnnNotSupported(cudnnStatus_t status) {
  return CUDNN_STATUS_CATEGORY(status) == CUDNN_STATUS_NOT_SUPPORTED;
}

std::string_view CudnnStatusName(cudnnStatus_t status) {
  return cudnnGetErrorString(status);
}

absl::Status CudnnStatusToAbsl(cudnnStatus_t status, std::string_view what) {
  if (status == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  const std::string message =
      absl::StrCat(std::string(what), ": ", cudnnGetErrorString(status), " (",
                   static_cast<int>(status), ")");
  switch (CUDNN_STATUS_CATEGORY(status)) {
    case CUDNN_STATUS_BAD_PARAM:
      return absl::InvalidArgumentError(message);
    case CUDNN_STATUS_NOT_SUPPORTED:
      return absl::FailedPreconditionError(message);
    default:
      break;
  }
  if (status == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
      status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED) {
    return absl::ResourceExhaustedError(message);
  }
  return absl::InternalError(message);
}

bool IsCudaStickyError(cudaError_t status) {
  switch (status) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorECCUncorrectable:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

absl::Status CudaStatusToAbsl(cudaError_t status, std::string_view what) {
  if (status == cudaSuccess) return absl::OkStatus();
  const std::string message =
      absl::StrCat(std::string(what), ": ", cudaGetErrorName(status), ": ",
                   cudaGetErrorString(status));
  if (status == cudaErrorMemoryAllocation) {
    return absl::ResourceExhaustedError(message);
  }
  if (IsCudaStickyError(status)) {
    absl::Status s = absl::UnavailableError(
        absl::StrCat(message, " (sticky CUDA error; worker must restart)"));
    s.SetPayload(kFatalPayload, absl::Cord("1"));
    return s;
  }
  if (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver ||
      status == cudaErrorDevicesUnavailable ||
      status == cudaErrorSystemDriverMismatch ||
      status == cudaErrorCompatNotSupportedOnDevice) {
    return absl::UnavailableError(message);
  }
  return absl::InternalError(message);
}

bool IsFatalDeviceError(const absl::Status& status) {
  return status.GetPayload(kFatalPayload).has_value();
}

}  // namespace tunedb
