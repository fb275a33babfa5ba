#include "preload/device_memory.h"

#include <dlfcn.h>

#include <atomic>
#include <cstddef>

namespace tunedb::preload {
namespace {

// CUresult cuMemGetInfo_v2(size_t* free, size_t* total); 0 is CUDA_SUCCESS.
using MemGetInfoFn = int (*)(size_t*, size_t*);

MemGetInfoFn Find() {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (driver == nullptr) return nullptr;
  auto f = reinterpret_cast<MemGetInfoFn>(dlsym(driver, "cuMemGetInfo_v2"));
  dlclose(driver);  // drops the reference NOLOAD took; the program keeps it
  return f;
}

}  // namespace

std::optional<uint64_t> FreeDeviceMemory() {
  static std::atomic<MemGetInfoFn> found{nullptr};
  MemGetInfoFn f = found.load(std::memory_order_acquire);
  if (f == nullptr) {
    f = Find();
    if (f == nullptr) return std::nullopt;  // retried: the driver may load
    found.store(f, std::memory_order_release);
  }
  size_t free = 0, total = 0;
  if (f(&free, &total) != 0) return std::nullopt;
  return static_cast<uint64_t>(free);
}

}  // namespace tunedb::preload
