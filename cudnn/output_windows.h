// OutputWindows: which elements of a convolution's output verification
// compares. Reading a large output back whole (hundreds of MB for the first
// layers of a network at batch 64) costs the host far more than the search's
// timing; a wrong algorithm is wrong all over, so evenly spaced contiguous
// windows of at most `max_elements` in all decide as well. Host-only.
//
// Thread safety: pure functions.
#ifndef TUNEDB_CUDNN_OUTPUT_WINDOWS_H_
#define TUNEDB_CUDNN_OUTPUT_WINDOWS_H_

#include <cstdint>
#include <vector>

namespace tunedb {

// A run of `count` elements starting at element `offset`.
struct OutputWindow {
  int64_t offset = 0;
  int64_t count = 0;
  friend bool operator==(const OutputWindow& a, const OutputWindow& b) {
    return a.offset == b.offset && a.count == b.count;
  }
};

// The windows over an output of `total` elements: the whole output in one
// window when total <= max_elements (or max_elements <= 0), else
// kOutputWindowCount windows of max_elements / kOutputWindowCount elements,
// evenly spaced (a fixed stride apart, so one strided copy reads them), the
// first at 0 and the last ending within one stride of the end. Windows are
// sorted and do not overlap.
inline constexpr int kOutputWindowCount = 64;
std::vector<OutputWindow> OutputWindows(int64_t total, int64_t max_elements);

// Whether `windows` are of one length and a fixed stride apart (then
// *stride is set; a single window has stride 0).
bool EvenlyStrided(const std::vector<OutputWindow>& windows, int64_t* stride);

// The elements of `all` inside `windows`, in order.
std::vector<float> TakeWindows(const std::vector<float>& all,
                               const std::vector<OutputWindow>& windows);

}  // namespace tunedb

#endif  // TUNEDB_CUDNN_OUTPUT_WINDOWS_H_
