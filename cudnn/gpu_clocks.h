// GpuClocks: how far one GPU's SM clock is from its highest, read through
// NVML, so that a search warms the GPU up only when it is clocked down
// (GPUs idle at a fraction of their highest clock), whoever else kept it
// busy.
//
// NVML (libnvidia-ml.so.1) comes with the driver; it is loaded at run time,
// so nothing links against it and a host without it still searches (Known()
// is then false and callers fall back to their own idle time).
//
// Thread safety: thread-compatible; SmClockFraction() may be called from
// one thread at a time.
#ifndef TUNEDB_CUDNN_GPU_CLOCKS_H_
#define TUNEDB_CUDNN_GPU_CLOCKS_H_

#include <memory>
#include <optional>

namespace tunedb {

class GpuClocks {
 public:
  // The clocks of CUDA device `ordinal` (matched to NVML by PCI bus id).
  static std::unique_ptr<GpuClocks> ForCudaDevice(int ordinal);
  ~GpuClocks();
  GpuClocks(const GpuClocks&) = delete;
  GpuClocks& operator=(const GpuClocks&) = delete;

  // Whether NVML answered for the device.
  bool Known() const { return device_ != nullptr; }
  // The SM clock now over the highest SM clock, in (0, 1]; nullopt when
  // unknown.
  std::optional<double> SmClockFraction() const;

 private:
  struct Nvml;
  GpuClocks() = default;

  std::unique_ptr<Nvml> nvml_;
  void* device_ = nullptr;  // nvmlDevice_t
  unsigned max_sm_mhz_ = 0;
};

}  // namespace tunedb

#endif  // TUNEDB_CUDNN_GPU_CLOCKS_H_
