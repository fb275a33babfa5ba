// NvmlLibrary: NVML (libnvidia-ml.so.1, which comes with the driver) loaded
// at run time and initialised, so that nothing links against it and a host
// without it still runs. Callers bind the functions they need by name and
// declare their types themselves from nvml.h, whose ABI is stable: a return
// code (kSuccess is 0) and opaque device handles.
//
// Thread safety: NVML's functions are thread-safe; Load and the destructor
// are not to be raced with calls.
#ifndef TUNEDB_COMMON_NVML_LIBRARY_H_
#define TUNEDB_COMMON_NVML_LIBRARY_H_

#include <memory>

namespace tunedb {

class NvmlLibrary {
 public:
  using Return = int;
  using Device = void*;  // nvmlDevice_t
  static constexpr Return kSuccess = 0;

  // NVML loaded and initialised (nvmlInit_v2), or null where it does not
  // load or start.
  static std::unique_ptr<NvmlLibrary> Load();
  ~NvmlLibrary();  // nvmlShutdown, then unloads
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  // Points `f` at NVML's function `name`; false (f null) where it lacks it.
  template <typename F>
  bool Bind(F& f, const char* name) const {
    f = reinterpret_cast<F>(Symbol(name));
    return f != nullptr;
  }

 private:
  NvmlLibrary() = default;
  void* Symbol(const char* name) const;

  void* lib_ = nullptr;
  Return (*shutdown_)() = nullptr;
};

}  // namespace tunedb

#endif  // TUNEDB_COMMON_NVML_LIBRARY_H_
