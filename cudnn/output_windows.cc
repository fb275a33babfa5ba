#include "cudnn/output_windows.h"

#include <algorithm>

namespace tunedb {

std::vector<OutputWindow> OutputWindows(int64_t total, int64_t max_elements) {
  if (total <= 0) return {};
  if (max_elements <= 0 || total <= max_elements) return {{0, total}};
  const int64_t n = kOutputWindowCount;
  const int64_t count = std::max<int64_t>(1, max_elements / n);
  // Starts spread over [0, total - count], the first at 0 and the last at
  // total - count; windows never overlap since n * count <= total.
  std::vector<OutputWindow> windows;
  windows.reserve(n);
  const int64_t span = total - count;
  for (int64_t i = 0; i < n; ++i) {
    windows.push_back({span * i / (n - 1), count});
  }
  return windows;
}

std::vector<float> TakeWindows(const std::vector<float>& all,
                               const std::vector<OutputWindow>& windows) {
  std::vector<float> out;
  for (const OutputWindow& w : windows) {
    const int64_t end =
        std::min<int64_t>(w.offset + w.count, static_cast<int64_t>(all.size()));
    if (w.offset >= end) continue;
    out.insert(out.end(), all.begin() + w.offset, all.begin() + end);
  }
  return out;
}

}  // namespace tunedb
