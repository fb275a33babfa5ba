// RealCudnn: the cuDNN library's own definition of a function this library
// also defines, found without recursion: dlvsym(RTLD_NEXT, name,
// "libcudnn.so.9"), then dlsym(RTLD_NEXT), then the already loaded
// libcudnn.so.9 (dlopen RTLD_NOLOAD, which also reaches a copy loaded with
// RTLD_LOCAL). A pointer into the shim itself is never returned. The shim
// defines FindRealCudnnSymbol (real_cudnn.cc); the core's definition
// (core_entry.cc) asks the shim's, so its lookups too start after the shim.
//
//   static RealFunction<decltype(&cudnnGetVersion)> real("cudnnGetVersion");
//   if (auto f = real.get()) version = f();
//
// Thread safety: thread-safe; a found pointer is kept (one atomic load per
// call after that); a miss is retried on the next call.
#ifndef TUNEDB_PRELOAD_REAL_CUDNN_H_
#define TUNEDB_PRELOAD_REAL_CUDNN_H_

#include <atomic>

namespace tunedb::preload {

// The real definition of `name`, or nullptr when no cuDNN is loaded.
void* FindRealCudnnSymbol(const char* name);

template <typename Fn>
class RealFunction {
 public:
  explicit constexpr RealFunction(const char* name) : name_(name) {}

  Fn get() {
    void* p = ptr_.load(std::memory_order_acquire);
    if (p == nullptr) {
      p = FindRealCudnnSymbol(name_);
      if (p == nullptr) return nullptr;
      ptr_.store(p, std::memory_order_release);
    }
    return reinterpret_cast<Fn>(p);
  }

 private:
  const char* name_;
  std::atomic<void*> ptr_{nullptr};
};

}  // namespace tunedb::preload

#endif  // TUNEDB_PRELOAD_REAL_CUDNN_H_
