// GpuUse: whether another program is using a GPU now. TuningCore asks it
// before a search that a program's miss caused (SearchWhen::kWhenIdle), so
// that such searches wait until the GPU is idle, or go to an idle GPU of the
// same model, instead of slowing the program down (docs/architecture.md,
// "Searches a program's misses cause").
//
// The daemon's implementation reads NVML (server/service/nvml_gpu_use.h);
// tests give their own.
//
// Thread safety: implementations must be thread-safe (every device worker
// asks).
#ifndef TUNEDB_SERVER_TUNING_GPU_USE_H_
#define TUNEDB_SERVER_TUNING_GPU_USE_H_

#include "common/device_info.h"

namespace tunedb {

class GpuUse {
 public:
  virtual ~GpuUse() = default;
  // True while a program other than this daemon and its workers runs work
  // on `device`. An implementation that cannot tell answers false: the
  // search then runs as if the policy were off.
  virtual bool InUse(const DeviceInfo& device) = 0;
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_GPU_USE_H_
