#include "preload/core_loader.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "preload/real_cudnn.h"

namespace tunedb::preload {
namespace {

// The folder this library was loaded from, with a trailing '/'.
std::string OwnFolder() {
  Dl_info info{};
  static const int kAnchor = 0;
  if (dladdr(&kAnchor, &info) == 0 || info.dli_fname == nullptr) return "";
  const std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

const CoreApi* Load(std::string* why) {
  const std::string path = OwnFolder() + kCoreFileName;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* e = dlerror();
    *why = e != nullptr ? e : "dlopen failed";
    return nullptr;
  }
  auto init = reinterpret_cast<CoreInitFn>(dlsym(handle, kCoreInitSymbol));
  const CoreApi* api = init != nullptr ? init(&FindRealCudnnSymbol) : nullptr;
  if (api == nullptr || api->version != kCoreApiVersion ||
      api->decide == nullptr || api->record == nullptr ||
      api->answer_graph == nullptr || api->plan_event == nullptr) {
    *why = path + " is from another build";
    return nullptr;  // stays loaded: its code may already run
  }
  return api;
}

}  // namespace

const CoreApi* LoadedCore() {
  static const CoreApi* core = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string why;
    core = Load(&why);
    const char* log = std::getenv("TUNEDB_PRELOAD_LOG");
    if (core == nullptr && (log == nullptr || std::strcmp(log, "off") != 0)) {
      std::fprintf(stderr,
                   "tunedb preload: cannot load %s (%s); every cuDNN call "
                   "goes straight to cuDNN\n",
                   kCoreFileName, why.c_str());
    }
  });
  return core;
}

}  // namespace tunedb::preload
