// DeviceValues: seeded random element data kept on the device, per data
// type, so that a search fills its buffers with a device-to-device copy
// instead of generating and uploading them every time (which can cost more
// than cudnnFind itself: docs/gpu.md).
//
// A type's values are RandomElements(type, kPeriod, seed), uniform in
// [-1, 1), repeated: element i is element i % kPeriod of that sequence, so
// growing the pool (to twice its size, or what a fill needs) never changes
// the values a fill at a given offset gets. Only kPeriod elements are made
// on the host; the rest are device-to-device copies.
//
// Thread safety: none; one thread at a time, on the current CUDA device.
#ifndef TUNEDB_CUDNN_DEVICE_VALUES_H_
#define TUNEDB_CUDNN_DEVICE_VALUES_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>

#include "absl/status/status.h"
#include "cudnn/cudnn_handles.h"
#include "tunedb/problem.h"

namespace tunedb {

class DeviceValues {
 public:
  // A prime, so that no tensor dimension lines up with the repetition.
  static constexpr int64_t kPeriod = 4'194'301;

  explicit DeviceValues(uint64_t seed) : seed_(seed) {}

  // Copies elements [offset, offset + count) of `type`'s values to `dst`
  // (count * DataTypeBytes(type) bytes), ordered on `stream`. Grows the pool
  // first when it is too short. RESOURCE_EXHAUSTED if the pool does not fit
  // on the device.
  absl::Status Fill(DataType type, int64_t offset, int64_t count, void* dst,
                    cudaStream_t stream);

  // Bytes held on the device, over all types.
  int64_t bytes() const;

 private:
  uint64_t seed_;
  std::map<DataType, DeviceBuffer> pools_;
};

}  // namespace tunedb

#endif  // TUNEDB_CUDNN_DEVICE_VALUES_H_
