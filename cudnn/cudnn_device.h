// Device identity from the CUDA runtime and the loaded cuDNN library: what a
// worker reports as its DeviceInfo / DeviceKey, and what the client library's
// CurrentDeviceKey() looks results up with (the same key, from one place).
//
// The key's cudnn_version is cudnnGetVersion() of the library this process
// actually loaded (so two workers started with different LD_LIBRARY_PATHs
// report different keys), cuda_runtime_version is cudaRuntimeGetVersion(),
// and model, compute capability, SM count and UUID come from
// cudaGetDeviceProperties. The driver version is the kernel module's
// ("580.159.04", from /proc/driver/nvidia/version) when readable, else the
// CUDA driver API version.
//
// Thread safety: stateless functions; safe from any thread.
#ifndef TUNEDB_CUDNN_CUDNN_DEVICE_H_
#define TUNEDB_CUDNN_CUDNN_DEVICE_H_

#include <string>

#include "absl/status/statusor.h"
#include "common/device_info.h"

namespace tunedb {

// Number of CUDA devices; UNAVAILABLE with CUDA's reason when there is no
// usable device or driver.
absl::StatusOr<int> CudaDeviceCount();

// The calling thread's current CUDA device ordinal (cudaGetDevice).
absl::StatusOr<int> CurrentCudaDevice();

// The DeviceKey of CUDA device `ordinal` with the cuDNN this process loaded.
absl::StatusOr<DeviceKey> QueryDeviceKey(int ordinal);

// The identity of CUDA device `ordinal` as this process sees it: its
// QueryDeviceKey() and what is stored beside it.
absl::StatusOr<DeviceInfo> QueryCudaDevice(int ordinal);

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" from the 16 UUID bytes.
std::string FormatGpuUuid(const unsigned char bytes[16]);

}  // namespace tunedb

#endif  // TUNEDB_CUDNN_CUDNN_DEVICE_H_
