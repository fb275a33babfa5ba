#include "common/nvml_library.h"

#include <dlfcn.h>

namespace tunedb {

std::unique_ptr<NvmlLibrary> NvmlLibrary::Load() {
  std::unique_ptr<NvmlLibrary> nvml(new NvmlLibrary());
  nvml->lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (nvml->lib_ == nullptr) return nullptr;
  Return (*init)() = nullptr;
  if (!nvml->Bind(init, "nvmlInit_v2") || init() != kSuccess) return nullptr;
  nvml->Bind(nvml->shutdown_, "nvmlShutdown");
  return nvml;
}

NvmlLibrary::~NvmlLibrary() {
  if (shutdown_ != nullptr) shutdown_();
  if (lib_ != nullptr) dlclose(lib_);
}

void* NvmlLibrary::Symbol(const char* name) const {
  return dlsym(lib_, name);
}

}  // namespace tunedb
