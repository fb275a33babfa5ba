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
#ifndef TUNEDB_CLIENT_PACKED_KEY_H_
#define TUNEDB_CLIENT_PACKED_KEY_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

#if defined(__GNUC__)
#define TUNEDB_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define TUNEDB_ALWAYS_INLINE inline
#endif

namespace tunedb {

struct PackedKey {
  static constexpr int kWords = 12;
  // Left uninitialized by default (PackKey writes every word); `PackedKey{}`
  // is all zeros.
  std::array<uint64_t, kWords> w;

  // Independent multiplies (they run in parallel), then a 64-bit finalizer.
  // Keys are compared in full on a match, so this only has to spread them.
  uint64_t Hash() const {
    static constexpr uint64_t kMul[kWords] = {
        0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull,
        0xd6e8feb86659fd93ull, 0xff51afd7ed558ccdull, 0xc4ceb9fe1a85ec53ull,
        0x87c37b91114253d5ull, 0x4cf5ad432745937full, 0x94d049bb133111ebull,
        0xbf58476d1ce4e5b9ull, 0x2545f4914f6cdd1dull, 0x9fb21c651e98df25ull};
    uint64_t a = 0, b = 0;
#pragma GCC unroll 6
    for (int i = 0; i < kWords; i += 2) {
      a += (w[i] ^ (w[i] >> 29)) * kMul[i];
      b += (w[i + 1] ^ (w[i + 1] >> 31)) * kMul[i + 1];
    }
    uint64_t h = a ^ ((b << 27) | (b >> 37));
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
  }
  friend bool operator==(const PackedKey& x, const PackedKey& y) {
    return x.w == y.w;
  }
};

// a == b, without a call for the short strings of GPU model names.
inline bool SameString(const std::string& a, const std::string& b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  const char* x = a.data();
  const char* y = b.data();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t u, v;
    std::memcpy(&u, x + i, 8);
    std::memcpy(&v, y + i, 8);
    if (u != v) return false;
  }
  for (; i < n; ++i) {
    if (x[i] != y[i]) return false;
  }
  return true;
}

class DeviceTable {
 public:
  static constexpr int kMaxDevices = 64;

  DeviceTable();
  ~DeviceTable();

  // The id of `device` (1..kMaxDevices), or 0 if it was never interned.
  int Find(const DeviceKey& device) const {
    int n = count_.load(std::memory_order_acquire);
    for (int i = 0; i < n; ++i) {
      // The numbers first: they differ more cheaply than the model names.
      const DeviceKey& d = *devices_[i];
      if (d.cudnn_version == device.cudnn_version &&
          d.sm_count == device.sm_count && d.cc_major == device.cc_major &&
          d.cc_minor == device.cc_minor &&
          d.cuda_runtime_version == device.cuda_runtime_version &&
          SameString(d.gpu_model, device.gpu_model)) {
        return i + 1;
      }
    }
    return 0;
  }
  // Find, else adds it; 0 if the table is full.
  int Intern(const DeviceKey& device) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  std::atomic<int> count_{0};
  absl::Mutex mu_;  // serializes Intern
  // Written once under mu_ before count_ is raised past the slot, then
  // immutable (Find reads them without the lock, so no ABSL_GUARDED_BY).
  std::array<std::unique_ptr<DeviceKey>, kMaxDevices> devices_;
};

// Packs `problem` (of the device with id `device_id` from a DeviceTable)
// and `constraints`; false if some value does not fit (or a graph-API key
// comes with excluded notes: those take the slow path; legacy results carry
// no notes, so the field does not change a legacy answer).
TUNEDB_ALWAYS_INLINE bool PackKey(int device_id, const ConvProblem& p,
                                  const Constraints& constraints,
                                  PackedKey* out) {
  auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  const uint64_t op = u(static_cast<int64_t>(p.op));
  const uint64_t dims = u(p.spatial_dims);
  const uint64_t mode = u(static_cast<int64_t>(p.mode));
  const uint64_t in_type = u(static_cast<int64_t>(p.input_type));
  const uint64_t out_type = u(static_cast<int64_t>(p.output_type));
  const uint64_t compute = u(static_cast<int64_t>(p.compute_type));
  const uint64_t layout = u(static_cast<int64_t>(p.layout));
  const uint64_t device = u(device_id);
  const uint64_t api = u(static_cast<int64_t>(p.api));
  const uint64_t align = u(p.alignment);
  // Enums in 4 bits, the alignment in 8, the device id in 16, everything
  // else in 32.
  const uint64_t narrow =
      ((op | dims | mode | in_type | out_type | compute | layout | api) >> 4) |
      (align >> 8) | (device >> 16) | (device == 0) |
      (p.api == ConvApi::kGraph && constraints.excluded_numerical_notes != 0);
  const ConvProblem::Dims& in = p.input;
  const ConvProblem::Dims& f = p.filter;
  const ConvProblem::Dims& pad = p.padding;
  const ConvProblem::Dims& st = p.stride;
  const ConvProblem::Dims& dil = p.dilation;
  const uint64_t wide =
      (u(p.n) | u(p.c) | u(p.k) | u(p.groups) | u(in[0]) | u(in[1]) | u(in[2]) |
       u(f[0]) | u(f[1]) | u(f[2]) | u(pad[0]) | u(pad[1]) | u(pad[2]) |
       u(st[0]) | u(st[1]) | u(st[2]) | u(dil[0]) | u(dil[1]) | u(dil[2])) >>
      32;
  uint64_t* w = out->w.data();
  w[0] = device | op << 16 | dims << 20 | mode << 24 | in_type << 28 |
         out_type << 32 | compute << 36 | layout << 40 |
         u(p.allow_tensor_cores) << 44 | u(p.allow_tf32) << 45 |
         u(constraints.deterministic_only) << 46 |
         u(constraints.max_workspace_bytes.has_value()) << 47 |
         u(constraints.launch_mode == LaunchMode::kGraph) << 48;
  w[1] = u(p.n) | u(p.c) << 32;
  w[2] = u(p.k) | u(p.groups) << 32;
  w[3] = u(in[0]) | u(in[1]) << 32;
  w[4] = u(in[2]) | u(f[0]) << 32;
  w[5] = u(f[1]) | u(f[2]) << 32;
  w[6] = u(pad[0]) | u(pad[1]) << 32;
  w[7] = u(pad[2]) | u(st[0]) << 32;
  w[8] = u(st[1]) | u(st[2]) << 32;
  w[9] = u(dil[0]) | u(dil[1]) << 32;
  w[10] = u(dil[2]) | api << 32 | align << 36;
  w[11] = u(constraints.max_workspace_bytes.value_or(0));
  return (narrow | wide) == 0;
}

}  // namespace tunedb

#endif  // TUNEDB_CLIENT_PACKED_KEY_H_
