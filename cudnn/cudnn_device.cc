#include "cudnn/cudnn_device.h"

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "cudnn/cudnn_status.h"

namespace tunedb {
namespace {

// The NVIDIA kernel module version, e.g. "580.159.04"; "" if unreadable.
std::string KernelDriverVersion() {
  std::ifstream in("/proc/driver/nvidia/version");
  if (!in) return "";
  std::stringstream text;
  text << in.rdbuf();
  std::smatch m;
  const std::string s = text.str();
  static const std::regex kVersion(
      R"(Kernel Module\s+(?:for\s+\S+\s+)?(\d+\.\d+(?:\.\d+)?))");
  if (std::regex_search(s, m, kVersion)) return m[1].str();
  static const std::regex kAny(R"((\d{3}\.\d+(?:\.\d+)?))");
  if (std::regex_search(s, m, kAny)) return m[1].str();
  return "";
}

absl::StatusOr<cudaDeviceProp> DeviceProperties(int ordinal) {
  cudaDeviceProp prop{};
  RETURN_IF_ERROR(CudaStatusToAbsl(cudaGetDeviceProperties(&prop, ordinal),
                                   "cudaGetDeviceProperties"));
  return prop;
}

// The key: model, compute capability and SM count from `prop`, the versions
// of the CUDA runtime and of the cuDNN library this process loaded.
absl::StatusOr<DeviceKey> KeyOf(const cudaDeviceProp& prop) {
  int runtime = 0;
  RETURN_IF_ERROR(CudaStatusToAbsl(cudaRuntimeGetVersion(&runtime),
                                   "cudaRuntimeGetVersion"));
  DeviceKey key;
  key.gpu_model = prop.name;
  key.cc_major = prop.major;
  key.cc_minor = prop.minor;
  key.sm_count = prop.multiProcessorCount;
  key.cudnn_version = static_cast<int>(cudnnGetVersion());
  key.cuda_runtime_version = runtime;
  return key;
}

}  // namespace

std::string FormatGpuUuid(const unsigned char b[16]) {
  return absl::StrFormat(
      "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%"
      "02x",
      b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
      b[12], b[13], b[14], b[15]);
}

absl::StatusOr<int> CudaDeviceCount() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    absl::Status s = CudaStatusToAbsl(err, "cudaGetDeviceCount");
    return absl::UnavailableError(s.message());
  }
  if (count == 0) return absl::UnavailableError("no CUDA device");
  return count;
}

absl::StatusOr<int> CurrentCudaDevice() {
  int ordinal = 0;
  RETURN_IF_ERROR(CudaStatusToAbsl(cudaGetDevice(&ordinal), "cudaGetDevice"));
  return ordinal;
}

absl::StatusOr<DeviceKey> QueryDeviceKey(int ordinal) {
  ASSIGN_OR_RETURN(const cudaDeviceProp prop, DeviceProperties(ordinal));
  return KeyOf(prop);
}

absl::StatusOr<DeviceInfo> QueryCudaDevice(int ordinal) {
  ASSIGN_OR_RETURN(const cudaDeviceProp prop, DeviceProperties(ordinal));
  DeviceInfo info;
  ASSIGN_OR_RETURN(info.key, KeyOf(prop));
  int driver_api = 0;
  RETURN_IF_ERROR(CudaStatusToAbsl(cudaDriverGetVersion(&driver_api),
                                   "cudaDriverGetVersion"));
  info.ordinal = ordinal;
  info.uuid =
      FormatGpuUuid(reinterpret_cast<const unsigned char*>(prop.uuid.bytes));
  std::string kernel = KernelDriverVersion();
  info.driver_version =
      kernel.empty()
          ? absl::StrCat("cuda-driver-api-", CudaVersionText(driver_api))
          : kernel;
  info.total_memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
  // The CUDA runtime has no MIG flag; a MIG slice is addressed by a "MIG-"
  // UUID in CUDA_VISIBLE_DEVICES (its smaller SM count is in the key anyway).
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  info.mig = visible != nullptr &&
             std::string(visible).find("MIG-") != std::string::npos;
  return info;
}

}  // namespace tunedb
