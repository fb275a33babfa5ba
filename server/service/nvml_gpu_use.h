// NvmlGpuUse: GpuUse from NVML (libnvidia-ml.so.1, loaded at run time, so
// the daemon builds and runs where it is missing). A GPU is in use while a
// process that is neither this daemon nor one of its children (the
// tunedb-worker processes) holds a compute context on it and the GPU was
// busy at least `busy_percent` of NVML's last sample period, unless NVML's
// per-process samples of the last second show only this daemon's processes
// that busy (its own searches). Where NVML cannot list processes (some
// containers see none of the host's) or has no per-process samples, the
// utilisation alone decides, so the daemon's own finished search can keep a
// waiting one back for one sample period (up to 1 s).
//
// Thread safety: thread-safe (NVML is; the handle table is filled once).
#ifndef TUNEDB_SERVER_SERVICE_NVML_GPU_USE_H_
#define TUNEDB_SERVER_SERVICE_NVML_GPU_USE_H_

#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "server/tuning/gpu_use.h"

namespace tunedb {

class NvmlGpuUse final : public GpuUse {
 public:
  // FAILED_PRECONDITION (with why) where NVML does not load or start.
  static absl::StatusOr<std::unique_ptr<NvmlGpuUse>> Create(int busy_percent);
  ~NvmlGpuUse() override;

  // False (the policy's off position) for a device NVML does not know by
  // its UUID or cannot read.
  bool InUse(const DeviceInfo& device) override;

 private:
  struct Library;
  NvmlGpuUse(std::unique_ptr<Library> nvml, int busy_percent);
  // Whether a process other than this one and its children has a compute
  // context on `device` (NVML's handle); nullopt where NVML cannot tell.
  std::optional<bool> ForeignProcess(void* device);
  // Whether `pid` is this process or one of its children.
  static bool Ours(unsigned int pid);
  // Whether NVML's per-process samples of the last second show processes
  // at least busy_percent busy, all of them ours; false where NVML has no
  // such samples.
  bool OnlyOursBusy(void* device);

  const std::unique_ptr<Library> nvml_;
  const int busy_percent_;
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SERVICE_NVML_GPU_USE_H_
