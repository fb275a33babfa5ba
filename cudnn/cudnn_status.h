// The one place where cuDNN and CUDA runtime statuses become absl::Status.
//
// Mapping (by cuDNN 9 status category):
//   BAD_PARAM*                -> INVALID_ARGUMENT
//   NOT_SUPPORTED*            -> FAILED_PRECONDITION (callers that search
//                                record it as AlgoStatus::kNotSupported)
//   *ALLOCATION_FAILED        -> RESOURCE_EXHAUSTED
//   INTERNAL*, EXECUTION_FAILED*, NOT_INITIALIZED, version mismatches
//                             -> INTERNAL
// CUDA runtime errors:
//   cudaErrorMemoryAllocation -> RESOURCE_EXHAUSTED
//   sticky errors (illegal address, launch failure, ECC, ...), no device,
//   driver too old            -> UNAVAILABLE: the CUDA context is unusable
//                                and the worker process must be restarted
//   others                    -> INTERNAL
// Every message names the failing call and cuDNN's/CUDA's own error text.
//
// Thread safety: stateless functions.
#ifndef TUNEDB_CUDNN_CUDNN_STATUS_H_
#define TUNEDB_CUDNN_CUDNN_STATUS_H_

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <string_view>

#include "absl/status/status.h"

namespace tunedb {

// OK for CUDNN_STATUS_SUCCESS; otherwise the mapped error, "<what>: <text>".
absl::Status CudnnStatusToAbsl(cudnnStatus_t status, std::string_view what);

// OK for cudaSuccess; otherwise the mapped error, "<what>: <name>: <text>".
absl::Status CudaStatusToAbsl(cudaError_t status, std::string_view what);

// True for every status of cuDNN's NOT_SUPPORTED category.
bool IsCudnnNotSupported(cudnnStatus_t status);

// True for CUDA errors after which the context is unusable (the process must
// exit to recover).
bool IsCudaStickyError(cudaError_t status);

// True if `status` came from CudaStatusToAbsl for a sticky error.
bool IsFatalDeviceError(const absl::Status& status);

// Short name of a cuDNN status, e.g. "CUDNN_STATUS_NOT_SUPPORTED".
std::string_view CudnnStatusName(cudnnStatus_t status);

}  // namespace tunedb

#endif  // TUNEDB_CUDNN_CUDNN_STATUS_H_
