// CurrentDevice: the DeviceKey of the GPU the calling thread works on, as
// the daemon would write it, without creating a CUDA context: the device of
// the current context from the CUDA driver (cuCtxGetDevice, the model, the
// compute capability and SM count), the version of the cuDNN the program
// loaded, and the CUDA runtime version tunedb was built with (the daemon of
// the same build reports that one).
//
// TUNEDB_DEVICE_KEY (a DeviceKey text, "gpu=... cc=... sms=... cudnn=...
// cuda=...") replaces the driver's answer: for hosts whose keys differ from
// the daemon's on purpose, and for tests without a GPU.
//
// Thread safety: thread-safe; keys are computed once per device ordinal.
#ifndef TUNEDB_PRELOAD_CURRENT_DEVICE_H_
#define TUNEDB_PRELOAD_CURRENT_DEVICE_H_

#include <array>
#include <memory>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "tunedb/problem.h"

namespace tunedb::preload {

class CurrentDevice {
 public:
  // `cudnn_version` is the loaded cuDNN's cudnnGetVersion().
  explicit CurrentDevice(int cudnn_version);

  // UNAVAILABLE when no CUDA context is current (or the driver is not
  // loaded); INVALID_ARGUMENT for a bad TUNEDB_DEVICE_KEY.
  absl::StatusOr<DeviceKey> Get() ABSL_LOCKS_EXCLUDED(mu_);

  // The driver's CUDA version (cuDriverGetVersion, 13000 = 13.0), 0 when
  // the driver is not loaded; with TUNEDB_DEVICE_KEY set,
  // TUNEDB_DRIVER_VERSION's (0 without it).
  int DriverVersion() const;

 private:
  static constexpr int kMaxDevices = 64;

  const int cudnn_version_;
  std::optional<absl::StatusOr<DeviceKey>> from_env_;
  absl::Mutex mu_;
  std::array<std::unique_ptr<DeviceKey>, kMaxDevices> keys_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace tunedb::preload

#endif  // TUNEDB_PRELOAD_CURRENT_DEVICE_H_
