#include "cudnn/device_values.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "cudnn/cudnn_status.h"
#include "cudnn/host_values.h"

namespace tunedb {
namespace {

// The smallest pool made: small problems share one upload.
constexpr int64_t kMinPoolElements = int64_t{1} << 20;

}  // namespace

absl::Status DeviceValues::Fill(DataType type, int64_t offset, int64_t count,
                                void* dst, cudaStream_t stream) {
  if (count <= 0) return absl::OkStatus();
  const int64_t elem = DataTypeBytes(type);
  DeviceBuffer& pool = pools_[type];
  const int64_t have = static_cast<int64_t>(pool.bytes()) / elem;
  const int64_t need = offset + count;
  if (need > have) {
    const int64_t size = std::max({need, 2 * have, kMinPoolElements});
    // Free the old pool first: the new one may need its memory.
    pool = DeviceBuffer();
    ASSIGN_OR_RETURN(DeviceBuffer grown,
                     DeviceBuffer::Allocate(static_cast<size_t>(size * elem)));
    const int64_t made = std::min(size, kPeriod);
    const std::vector<unsigned char> host = RandomElements(type, made, seed_);
    auto* base = static_cast<unsigned char*>(grown.get());
    RETURN_IF_ERROR(CudaStatusToAbsl(
        cudaMemcpy(base, host.data(), host.size(), cudaMemcpyHostToDevice),
        "cudaMemcpy(values)"));
    // Repeat the first kPeriod elements: [0, have) copied after itself.
    for (int64_t have_now = made; have_now < size;) {
      const int64_t n = std::min(have_now, size - have_now);
      RETURN_IF_ERROR(CudaStatusToAbsl(
          cudaMemcpy(base + have_now * elem, base,
                     static_cast<size_t>(n * elem), cudaMemcpyDeviceToDevice),
          "cudaMemcpy(values, repeat)"));
      have_now += n;
    }
    pool = std::move(grown);
  }
  const auto* src =
      static_cast<const unsigned char*>(pool.get()) + offset * elem;
  return CudaStatusToAbsl(
      cudaMemcpyAsync(dst, src, static_cast<size_t>(count * elem),
                      cudaMemcpyDeviceToDevice, stream),
      "cudaMemcpyAsync(fill)");
}

int64_t DeviceValues::bytes() const {
  int64_t total = 0;
  for (const auto& [type, pool] : pools_) {
    total += static_cast<int64_t>(pool.bytes());
  }
  return total;
}

}  // namespace tunedb
