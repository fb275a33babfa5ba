// FreeDeviceMemory: how many bytes the GPU of the calling thread's current
// CUDA context has free, from the CUDA driver the program already loaded
// (cuMemGetInfo_v2 of libcuda.so.1, found with dlopen(RTLD_NOLOAD): the
// shim never loads the driver itself, nor creates a context).
//
// Thread safety: thread-safe.
#ifndef TUNEDB_PRELOAD_DEVICE_MEMORY_H_
#define TUNEDB_PRELOAD_DEVICE_MEMORY_H_

#include <cstdint>
#include <optional>

namespace tunedb::preload {

// nullopt when no driver is loaded or it answers with an error (e.g. no
// current context).
std::optional<uint64_t> FreeDeviceMemory();

}  // namespace tunedb::preload

#endif  // TUNEDB_PRELOAD_DEVICE_MEMORY_H_
