#include "server/search/algo_failure.h"

#include <cuda_runtime_api.h>

#include <string>

#include "common/status_macros.h"
#include "cudnn/cudnn_status.h"

namespace tunedb {

absl::Status CheckStickyError() {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (IsCudaStickyError(err)) return CudaStatusToAbsl(err, "CUDA context");
  return absl::OkStatus();
}

absl::Status MarkFailed(AlgoResult& r, const absl::Status& why) {
  RETURN_IF_ERROR(CheckStickyError());
  r.status = AlgoStatus::kFailed;
  r.error = std::string(why.message());
  return absl::OkStatus();
}

}  // namespace tunedb
