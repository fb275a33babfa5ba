#include "cudnn/gpu_clocks.h"

#include <cuda_runtime_api.h>

#include "common/nvml_library.h"

namespace tunedb {
namespace {

// NVML_CLOCK_SM (nvml.h).
constexpr int kNvmlClockSm = 1;

}  // namespace

struct GpuClocks::Nvml {
  std::unique_ptr<NvmlLibrary> lib;
  NvmlLibrary::Return (*by_pci)(const char*, NvmlLibrary::Device*) = nullptr;
  NvmlLibrary::Return (*clock)(NvmlLibrary::Device, int, unsigned*) = nullptr;
  NvmlLibrary::Return (*max_clock)(NvmlLibrary::Device, int,
                                   unsigned*) = nullptr;
};

std::unique_ptr<GpuClocks> GpuClocks::ForCudaDevice(int ordinal) {
  std::unique_ptr<GpuClocks> clocks(new GpuClocks());
  auto nvml = std::make_unique<Nvml>();
  nvml->lib = NvmlLibrary::Load();
  if (nvml->lib == nullptr ||
      !nvml->lib->Bind(nvml->by_pci, "nvmlDeviceGetHandleByPciBusId_v2") ||
      !nvml->lib->Bind(nvml->clock, "nvmlDeviceGetClockInfo") ||
      !nvml->lib->Bind(nvml->max_clock, "nvmlDeviceGetMaxClockInfo")) {
    return clocks;
  }
  char pci[32] = {};
  if (cudaDeviceGetPCIBusId(pci, sizeof(pci), ordinal) != cudaSuccess) {
    cudaGetLastError();
    return clocks;
  }
  NvmlLibrary::Device device = nullptr;
  unsigned max_mhz = 0;
  if (nvml->by_pci(pci, &device) != NvmlLibrary::kSuccess ||
      nvml->max_clock(device, kNvmlClockSm, &max_mhz) !=
          NvmlLibrary::kSuccess ||
      max_mhz == 0) {
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
  if (nvml_->clock(device_, kNvmlClockSm, &mhz) != NvmlLibrary::kSuccess) {
    return std::nullopt;
  }
  return static_cast<double>(mhz) / max_sm_mhz_;
}

}  // namespace tunedb
