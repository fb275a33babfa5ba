#include "preload/real_cudnn.h"

#include <dlfcn.h>

namespace tunedb::preload {
namespace {

constexpr const char* kSoname = "libcudnn.so.9";
constexpr const char* kVersionNode = "libcudnn.so.9";

// True if `p` lies in this library (a lookup that found our own
// interposer instead of cuDNN's function).
bool IsOurs(void* p) {
  Dl_info mine{}, theirs{};
  static const int kAnchor = 0;
  if (dladdr(&kAnchor, &mine) == 0 || dladdr(p, &theirs) == 0) return false;
  return mine.dli_fbase == theirs.dli_fbase;
}

void* Accept(void* p) { return p != nullptr && !IsOurs(p) ? p : nullptr; }

}  // namespace

void* FindRealCudnnSymbol(const char* name) {
  if (void* p = Accept(dlvsym(RTLD_NEXT, name, kVersionNode))) return p;
  if (void* p = Accept(dlsym(RTLD_NEXT, name))) return p;
  // A cuDNN the program loaded with RTLD_LOCAL is not in the global scope;
  // RTLD_NOLOAD hands back its handle without loading anything.
  void* handle = dlopen(kSoname, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return nullptr;
  void* p = Accept(dlvsym(handle, name, kVersionNode));
  if (p == nullptr) p = Accept(dlsym(handle, name));
  dlclose(handle);  // drops the reference NOLOAD took; cuDNN stays loaded
  return p;
}

}  // namespace tunedb::preload
