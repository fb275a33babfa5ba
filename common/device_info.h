// DeviceInfo: one GPU as a finder or worker reports it — the DeviceKey part
// that results are keyed by, plus what is stored beside a result but is not
// part of the key (ordinal, UUID, driver, memory, MIG).
//
// Thread safety: a plain value type.
#ifndef TUNEDB_COMMON_DEVICE_INFO_H_
#define TUNEDB_COMMON_DEVICE_INFO_H_

#include <cstdint>
#include <string>

#include "tunedb/problem.h"

namespace tunedb {

// One device a finder can search on. For a host with one GPU and two cuDNN
// versions (served by two workers) there are two DeviceInfos with one ordinal.
struct DeviceInfo {
  DeviceKey key;
  int ordinal = 0;  // CUDA device ordinal
  std::string uuid;
  std::string driver_version;
  int64_t total_memory_bytes = 0;
  bool mig = false;
};

}  // namespace tunedb

#endif  // TUNEDB_COMMON_DEVICE_INFO_H_
