#include "cudnn/gpu_clocks.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

namespace tunedb {
namespace {

// The few NVML declarations needed (nvml.h's, whose ABI is stable): a
// return code (0 is success), an opaque device handle, NVML_CLOCK_SM.
using NvmlReturn = int;
using NvmlDevice = void*;
constexpr int kNvmlClockSm = 1;

}  // namespace

struct GpuClocks::Nvml {
  void* lib = nullptr;
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  NvmlReturn (*by_pci)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*clock)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*max_clock)(NvmlDevice, int, unsigned*) = nullptr;
  bool initialized = false;

  ~Nvml() {
    if (initialized && shutdown != nullptr) shutdown();
    if (lib != nullptr) dlclose(lib);
  }

  template <typename F>
  bool Bind(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    return f != nullptr;
  }
};

std::unique_ptr<GpuClocks> GpuClocks::ForCudaDevice(int ordinal) {
  std::unique_ptr<GpuClocks> clocks(new GpuClocks());
  auto nvml = std::make_unique<Nvml>();
  nvml->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (nvml->lib == nullptr) return clocks;
  if (!nvml->Bind(nvml->init, "nvmlInit_v2") ||
      !nvml->Bind(nvml->shutdown, "nvmlShutdown") ||
      !nvml->Bind(nvml->by_pci, "nvmlDeviceGetHandleByPciBusId_v2") ||
      !nvml->Bind(nvml->clock, "nvmlDeviceGetClockInfo") ||
      !nvml->Bind(nvml->max_clock, "nvmlDeviceGetMaxClockInfo")) {
    return clocks;
  }
  if (nvml->init() != 0) return clocks;
  nvml->initialized = true;
  char pci[32] = {};
  if (cudaDeviceGetPCIBusId(pci, sizeof(pci), ordinal) != cudaSuccess) {
    cudaGetLastError();
    return clocks;
  }
  NvmlDevice device = nullptr;
  unsigned max_mhz = 0;
  if (nvml->by_pci(pci, &device) != 0 ||
      nvml->max_clock(device, kNvmlClockSm, &max_mhz) != 0 || max_mhz == 0) {
    return clocks;
  }
  clocks->nvml_ = std::move(nvml);
  clocks->device_ = device;
  clocks->max_sm_mhz_ = max_mhz;
  return clocks;
}

GpuClocks::~GpuClocks() = default;

std::optional<double> GpuClocks::SmClockFraction() const {
  if (device_ == nullptr) return std::nullopt;
  unsigned mhz = 0;
  if (nvml_->clock(device_, kNvmlClockSm, &mhz) != 0) return std::nullopt;
  return static_cast<double>(mhz) / max_sm_mhz_;
}

}  // namespace tunedb
