// ShimMutex: a std::mutex that clang's thread-safety analysis understands
// (ABSL_GUARDED_BY and friends), for the shim, libtunedb_preload.so, which
// needs only the C and C++ runtimes (preload/CMakeLists.txt) and so has no
// absl::Mutex; absl's annotation macros are header-only. ShimMutexLock
// holds one for a scope.
//
// Thread safety: a mutex; a ShimMutexLock belongs to the thread that made it.
#ifndef TUNEDB_PRELOAD_SHIM_MUTEX_H_
#define TUNEDB_PRELOAD_SHIM_MUTEX_H_

#include <mutex>

#include "absl/base/thread_annotations.h"

namespace tunedb::preload {

class ABSL_LOCKABLE ShimMutex {
 public:
  ShimMutex() = default;
  ShimMutex(const ShimMutex&) = delete;
  ShimMutex& operator=(const ShimMutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }

 private:
  std::mutex mu_;
};

class ABSL_SCOPED_LOCKABLE ShimMutexLock {
 public:
  explicit ShimMutexLock(ShimMutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu)
      : mu_(mu) {
    mu_->Lock();
  }
  ShimMutexLock(const ShimMutexLock&) = delete;
  ShimMutexLock& operator=(const ShimMutexLock&) = delete;
  ~ShimMutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }

 private:
  ShimMutex* const mu_;
};

}  // namespace tunedb::preload

#endif  // TUNEDB_PRELOAD_SHIM_MUTEX_H_
