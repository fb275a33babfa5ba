// PackedKey: a ProblemKey plus Constraints squeezed into 12 machine words,
// the form the in-process cache hashes and compares on every Get.
//
// The device half is interned by a DeviceTable (an append-only list of the
// few devices a process sees) to a small id, so a Get compares one model
// string against the first entries instead of hashing it. Values that do not
// fit the packing (a dimension >= 2^32, more devices than the table holds)
// make the key unpackable; the client then bypasses the cache for it.
//
// Thread safety: PackedKey is a plain value. DeviceTable::Find and Intern
// are thread-safe; Find takes no lock.
#ifndef TUNEDB_CLIENT_SRC_PACKED_KEY_H_
#define TUNEDB_CLIENT_SRC_PACKED_KEY_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

struct PackedKey {
  static constexpr int kWords = 12;
  std::array<uint64_t, kWords> w{};

  uint64_t Hash() const {
    // Two independent multiply-xorshift lanes, then a final mix.
    uint64_t a = 0x9e3779b97f4a7c15ull, b = 0xc2b2ae3d27d4eb4full;
    for (int i = 0; i < kWords; i += 2) {
      a = (a ^ w[i]) * 0xff51afd7ed558ccdull;
      a ^= a >> 29;
      b = (b ^ w[i + 1]) * 0xc4ceb9fe1a85ec53ull;
      b ^= b >> 31;
    }
    uint64_t h = (a ^ (b >> 17) ^ (b << 47)) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 32);
  }
  friend bool operator==(const PackedKey& x, const PackedKey& y) {
    return x.w == y.w;
  }
};

class DeviceTable {
 public:
  static constexpr int kMaxDevices = 64;

  DeviceTable();
  ~DeviceTable();

  // The id of `device` (1..kMaxDevices), or 0 if it was never interned.
  int Find(const DeviceKey& device) const {
    int n = count_.load(std::memory_order_acquire);
    for (int i = 0; i < n; ++i) {
      if (*devices_[i] == device) return i + 1;
    }
    return 0;
  }
  // Find, else adds it; 0 if the table is full.
  int Intern(const DeviceKey& device);

 private:
  std::atomic<int> count_{0};
  std::mutex mu_;  // serializes Intern
  // Written once before count_ is raised past the slot, then immutable.
  std::array<std::unique_ptr<DeviceKey>, kMaxDevices> devices_;
};

// Packs `problem` (of the device with id `device_id` from a DeviceTable)
// and `constraints`; false if some value does not fit.
inline bool PackKey(int device_id, const ConvProblem& p,
                    const Constraints& constraints, PackedKey* out) {
  auto small = [](int64_t v) { return static_cast<uint64_t>(v) < 16; };
  if (!small(static_cast<int64_t>(p.op)) || !small(p.spatial_dims) ||
      !small(static_cast<int64_t>(p.mode)) ||
      !small(static_cast<int64_t>(p.input_type)) ||
      !small(static_cast<int64_t>(p.output_type)) ||
      !small(static_cast<int64_t>(p.compute_type)) ||
      !small(static_cast<int64_t>(p.layout)) || device_id <= 0 ||
      device_id > 0xffff) {
    return false;
  }
  // Every 32-bit field must hold its value exactly.
  uint64_t wide = 0;
  auto u32 = [&wide](int64_t v) {
    wide |= static_cast<uint64_t>(v) >> 32;
    return static_cast<uint64_t>(v) & 0xffffffffull;
  };
  uint64_t* w = out->w.data();
  w[0] = static_cast<uint64_t>(device_id) |
         static_cast<uint64_t>(p.op) << 16 |
         static_cast<uint64_t>(p.spatial_dims) << 20 |
         static_cast<uint64_t>(p.mode) << 24 |
         static_cast<uint64_t>(p.input_type) << 28 |
         static_cast<uint64_t>(p.output_type) << 32 |
         static_cast<uint64_t>(p.compute_type) << 36 |
         static_cast<uint64_t>(p.layout) << 40 |
         static_cast<uint64_t>(p.allow_tensor_cores) << 44 |
         static_cast<uint64_t>(p.allow_tf32) << 45 |
         static_cast<uint64_t>(constraints.deterministic_only) << 46 |
         static_cast<uint64_t>(constraints.max_workspace_bytes.has_value())
             << 47;
  w[1] = u32(p.n) | u32(p.c) << 32;
  w[2] = u32(p.k) | u32(p.groups) << 32;
  // 15 spatial values, two per word.
  const ConvProblem::Dims* dims[5] = {&p.input, &p.filter, &p.padding,
                                      &p.stride, &p.dilation};
  uint64_t halves[16] = {};
  for (int a = 0; a < 5; ++a) {
    for (int i = 0; i < ConvProblem::kMaxSpatialDims; ++i) {
      halves[a * 3 + i] = u32((*dims[a])[i]);
    }
  }
  for (int i = 0; i < 8; ++i) w[3 + i] = halves[2 * i] | halves[2 * i + 1] << 32;
  w[11] = static_cast<uint64_t>(constraints.max_workspace_bytes.value_or(0));
  return wide == 0;
}

}  // namespace tunedb

#endif  // TUNEDB_CLIENT_SRC_PACKED_KEY_H_
