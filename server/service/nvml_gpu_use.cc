#include "server/service/nvml_gpu_use.h"

#include <unistd.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/nvml_library.h"

namespace tunedb {
namespace {

// NVML's types, as far as used here (nvml.h; stable ABI).
using NvmlReturn = NvmlLibrary::Return;
using NvmlDevice = NvmlLibrary::Device;
constexpr NvmlReturn kNvmlSuccess = NvmlLibrary::kSuccess;
constexpr NvmlReturn kNvmlInsufficientSize = 7;
struct NvmlUtilization {
  unsigned int gpu;
  unsigned int memory;
};
struct NvmlProcessUtilization {  // nvmlProcessUtilizationSample_t
  unsigned int pid;
  unsigned long long time_stamp;  // CPU time, microseconds
  unsigned int sm_util;
  unsigned int mem_util;
  unsigned int enc_util;
  unsigned int dec_util;
};
// How far back per-process samples are read: NVML's sample period is at
// most 1 s.
constexpr int64_t kSampleWindowMicros = 1000000;
struct NvmlProcessInfo {  // nvmlProcessInfo_t (v2 and v3)
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

// The parent pid of `pid` from /proc, or -1.
long ParentOf(unsigned int pid) {
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(stat, line)) return -1;
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(line.substr(close + 1));
  std::string state;
  long ppid = -1;
  rest >> state >> ppid;
  return ppid;
}

}  // namespace

struct NvmlGpuUse::Library {
  std::unique_ptr<NvmlLibrary> lib;
  NvmlReturn (*by_uuid)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*utilization)(NvmlDevice, NvmlUtilization*) = nullptr;
  NvmlReturn (*processes)(NvmlDevice, unsigned int*, NvmlProcessInfo*) =
      nullptr;
  NvmlReturn (*process_utilization)(NvmlDevice, NvmlProcessUtilization*,
                                    unsigned int*, unsigned long long) =
      nullptr;
};

absl::StatusOr<std::unique_ptr<NvmlGpuUse>> NvmlGpuUse::Create(
    int busy_percent) {
  auto nvml = std::make_unique<Library>();
  nvml->lib = NvmlLibrary::Load();
  if (nvml->lib == nullptr) {
    return absl::FailedPreconditionError(
        "NVML (libnvidia-ml.so.1) does not load or start");
  }
  if (!nvml->lib->Bind(nvml->by_uuid, "nvmlDeviceGetHandleByUUID") ||
      !nvml->lib->Bind(nvml->utilization, "nvmlDeviceGetUtilizationRates")) {
    return absl::FailedPreconditionError("NVML lacks the functions needed");
  }
  if (!nvml->lib->Bind(nvml->processes,
                       "nvmlDeviceGetComputeRunningProcesses_v3")) {
    nvml->lib->Bind(nvml->processes, "nvmlDeviceGetComputeRunningProcesses_v2");
  }
  nvml->lib->Bind(nvml->process_utilization,
                  "nvmlDeviceGetProcessUtilization");
  return std::unique_ptr<NvmlGpuUse>(
      new NvmlGpuUse(std::move(nvml), busy_percent));
}

NvmlGpuUse::NvmlGpuUse(std::unique_ptr<Library> nvml, int busy_percent)
    : nvml_(std::move(nvml)), busy_percent_(busy_percent) {}

NvmlGpuUse::~NvmlGpuUse() = default;

std::optional<bool> NvmlGpuUse::ForeignProcess(void* device) {
  if (nvml_->processes == nullptr) return std::nullopt;
  std::vector<NvmlProcessInfo> infos(64);
  unsigned int count = static_cast<unsigned int>(infos.size());
  NvmlReturn r = nvml_->processes(device, &count, infos.data());
  if (r == kNvmlInsufficientSize) {
    infos.resize(count + 16);
    count = static_cast<unsigned int>(infos.size());
    r = nvml_->processes(device, &count, infos.data());
  }
  if (r != kNvmlSuccess) return std::nullopt;
  for (unsigned int i = 0; i < count && i < infos.size(); ++i) {
    if (!Ours(infos[i].pid)) return true;
  }
  return false;
}

bool NvmlGpuUse::Ours(unsigned int pid) {
  const long self = static_cast<long>(getpid());
  return static_cast<long>(pid) == self || ParentOf(pid) == self;
}

bool NvmlGpuUse::OnlyOursBusy(void* device) {
  if (nvml_->process_utilization == nullptr) return false;
  const unsigned long long since = static_cast<unsigned long long>(
      absl::ToUnixMicros(absl::Now()) - kSampleWindowMicros);
  std::vector<NvmlProcessUtilization> samples(64);
  unsigned int count = static_cast<unsigned int>(samples.size());
  NvmlReturn r = nvml_->process_utilization(device, samples.data(), &count,
                                            since);
  if (r == kNvmlInsufficientSize) {
    samples.resize(count + 16);
    count = static_cast<unsigned int>(samples.size());
    r = nvml_->process_utilization(device, samples.data(), &count, since);
  }
  if (r != kNvmlSuccess) return false;  // also NOT_FOUND: no samples
  bool ours_busy = false;
  for (unsigned int i = 0; i < count && i < samples.size(); ++i) {
    if (static_cast<int>(samples[i].sm_util) < busy_percent_) continue;
    if (!Ours(samples[i].pid)) return false;
    ours_busy = true;
  }
  return ours_busy;
}

bool NvmlGpuUse::InUse(const DeviceInfo& device) {
  NvmlDevice handle = nullptr;
  if (device.uuid.empty() ||
      nvml_->by_uuid(device.uuid.c_str(), &handle) != kNvmlSuccess) {
    return false;
  }
  const std::optional<bool> foreign = ForeignProcess(handle);
  if (foreign.has_value() && !*foreign) return false;
  NvmlUtilization use{};
  if (nvml_->utilization(handle, &use) != kNvmlSuccess) return false;
  if (static_cast<int>(use.gpu) < busy_percent_) return false;
  // Busy; but where NVML's per-process samples put every busy one on this
  // daemon's own searches, the program beside them is not using the GPU.
  return !OnlyOursBusy(handle);
}

}  // namespace tunedb
