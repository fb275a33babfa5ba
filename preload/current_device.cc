#include "preload/current_device.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace tunedb::preload {
namespace {

// The few driver entry points, from the libcuda.so.1 the program loaded.
struct Driver {
  CUresult (*ctx_get_device)(CUdevice*) = nullptr;
  CUresult (*device_get_name)(char*, int, CUdevice) = nullptr;
  CUresult (*device_get_attribute)(int*, CUdevice_attribute,
                                   CUdevice) = nullptr;
  CUresult (*driver_get_version)(int*) = nullptr;

  bool ok() const {
    return ctx_get_device != nullptr && device_get_name != nullptr &&
           device_get_attribute != nullptr;
  }
};

const Driver& LoadedDriver() {
  static const Driver driver = [] {
    Driver d;
    void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (h == nullptr) return d;
    d.ctx_get_device = reinterpret_cast<decltype(d.ctx_get_device)>(
        dlsym(h, "cuCtxGetDevice"));
    d.device_get_name = reinterpret_cast<decltype(d.device_get_name)>(
        dlsym(h, "cuDeviceGetName"));
    d.device_get_attribute = reinterpret_cast<decltype(d.device_get_attribute)>(
        dlsym(h, "cuDeviceGetAttribute"));
    d.driver_get_version = reinterpret_cast<decltype(d.driver_get_version)>(
        dlsym(h, "cuDriverGetVersion"));
    return d;  // the handle is kept: the driver stays loaded anyway
  }();
  return driver;
}

}  // namespace

CurrentDevice::CurrentDevice(int cudnn_version)
    : cudnn_version_(cudnn_version) {
  if (const char* text = std::getenv("TUNEDB_DEVICE_KEY")) {
    absl::StatusOr<DeviceKey> key = DeviceKey::Parse(text);
    if (!key.ok()) {
      key = absl::InvalidArgumentError(
          absl::StrCat("TUNEDB_DEVICE_KEY: ", key.status().message()));
    }
    from_env_ = std::move(key);
  }
}

int CurrentDevice::DriverVersion() const {
  if (from_env_.has_value()) {
    const char* text = std::getenv("TUNEDB_DRIVER_VERSION");
    return text != nullptr ? std::atoi(text) : 0;
  }
  const Driver& driver = LoadedDriver();
  int version = 0;
  if (driver.driver_get_version == nullptr ||
      driver.driver_get_version(&version) != CUDA_SUCCESS) {
    return 0;
  }
  return version;
}

absl::StatusOr<DeviceKey> CurrentDevice::Get() {
  if (from_env_.has_value()) return *from_env_;
  const Driver& driver = LoadedDriver();
  if (!driver.ok()) return absl::UnavailableError("no CUDA driver loaded");
  CUdevice device = 0;
  if (driver.ctx_get_device(&device) != CUDA_SUCCESS || device < 0 ||
      device >= kMaxDevices) {
    return absl::UnavailableError("no current CUDA context");
  }
  absl::MutexLock lock(&mu_);
  if (keys_[device] != nullptr) return *keys_[device];
  DeviceKey key;
  char name[256] = {};
  int runtime = 0;
  if (driver.device_get_name(name, sizeof(name) - 1, device) != CUDA_SUCCESS ||
      driver.device_get_attribute(&key.cc_major,
                                  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                  device) != CUDA_SUCCESS ||
      driver.device_get_attribute(&key.cc_minor,
                                  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                  device) != CUDA_SUCCESS ||
      driver.device_get_attribute(&key.sm_count,
                                  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                  device) != CUDA_SUCCESS ||
      cudaRuntimeGetVersion(&runtime) != cudaSuccess) {
    return absl::UnavailableError("CUDA driver query failed");
  }
  key.gpu_model = name;
  key.cudnn_version = cudnn_version_;
  key.cuda_runtime_version = runtime;
  keys_[device] = std::make_unique<DeviceKey>(key);
  return key;
}

}  // namespace tunedb::preload
