#include "client/packed_key.h"

namespace tunedb {

DeviceTable::DeviceTable() = default;
DeviceTable::~DeviceTable() = default;

int DeviceTable::Intern(const DeviceKey& device) {
  int id = Find(device);
  if (id != 0) return id;
  absl::MutexLock lock(&mu_);
  int n = count_.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) {
    if (*devices_[i] == device) return i + 1;
  }
  if (n == kMaxDevices) return 0;
  devices_[n] = std::make_unique<DeviceKey>(device);
  count_.store(n + 1, std::memory_order_release);
  return n + 1;
}

}  // namespace tunedb
