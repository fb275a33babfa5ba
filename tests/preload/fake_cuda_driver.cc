// A stand-in for the CUDA driver (libcuda.so.1) in the graph probe, for the
// one driver call the preload's shim makes itself: cuMemGetInfo_v2, how
// much memory the GPU has free (preload/device_memory.h). Environment:
//   FAKE_CUDA_FREE_BYTES=N   the free bytes it reports (default 80 GiB);
//                            "fail": it returns an error (CUDA_ERROR_INVALID_
//                            CONTEXT, 201), as without a current context
//
// Thread safety: thread-safe (reads the environment).
#include <cstddef>
#include <cstdlib>
#include <cstring>

extern "C" int cuMemGetInfo_v2(size_t* free, size_t* total) {
  const char* v = std::getenv("FAKE_CUDA_FREE_BYTES");
  if (v != nullptr && std::strcmp(v, "fail") == 0) return 201;
  if (free == nullptr || total == nullptr) return 1;  // INVALID_VALUE
  *total = size_t{141} << 30;
  *free = v != nullptr ? std::strtoull(v, nullptr, 10) : size_t{80} << 30;
  return 0;
}
