#include "cudnn/output_windows.h"

#include <algorithm>

namespace tunedb {

std::vector<OutputWindow> OutputWindows(int64_t total, int64_t max_elements) {
  if (total <= 0) return {};
  if (max_elements <= 0 || total <= max_elements) return {{0, total}};
  const int64_t n = kOutputWindowCount;
  const int64_t count = std::max<int64_t>(1, max_elements / n);
  // Starts `stride` apart from 0, so that one strided copy reads them all;
  // they never overlap since n * count <= total, and the last ends within
  // `stride` of the end.
  const int64_t stride = (total - count) / (n - 1);
  std::vector<OutputWindow> windows;
  windows.reserve(n);
  for (int64_t i = 0; i < n; ++i) windows.push_back({i * stride, count});
  return windows;
}

bool EvenlyStrided(const std::vector<OutputWindow>& windows, int64_t* stride) {
  if (windows.empty()) return false;
  *stride = windows.size() > 1 ? windows[1].offset - windows[0].offset : 0;
  for (size_t i = 1; i < windows.size(); ++i) {
    if (windows[i].count != windows[0].count ||
        windows[i].offset - windows[i - 1].offset != *stride) {
      return false;
    }
  }
  return true;
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
