// Helpers shared by the GPU tests: the skip-without-GPU check and problem
// construction.
//
// Thread safety: stateless functions.
#ifndef TUNEDB_TESTS_GPU_GPU_TEST_UTIL_H_
#define TUNEDB_TESTS_GPU_GPU_TEST_UTIL_H_

#include <cstdint>
#include <string>

#include "cudnn/cudnn_device.h"
#include "tunedb/problem.h"

namespace tunedb {

// "" if a CUDA GPU is usable, else why not.
inline std::string NoGpuReason() {
  absl::StatusOr<int> count = CudaDeviceCount();
  if (!count.ok()) return std::string(count.status().message());
  return "";
}

#define TUNEDB_SKIP_WITHOUT_GPU()                               \
  do {                                                          \
    const std::string tunedb_no_gpu_ = ::tunedb::NoGpuReason(); \
    if (!tunedb_no_gpu_.empty()) {                              \
      GTEST_SKIP() << "no CUDA GPU: " << tunedb_no_gpu_;        \
    }                                                           \
  } while (0)

// A 2-D (in.size 2) or 3-D problem; unused spatial entries stay 0.
inline ConvProblem MakeProblem(ConvOp op, Layout layout, DataType type,
                               bool tf32, int64_t n, int64_t c, int64_t k,
                               int64_t in, int64_t filt, int64_t pad,
                               int64_t stride, int64_t dil, int64_t groups) {
  ConvProblem p;
  p.op = op;
  p.layout = layout;
  p.spatial_dims = LayoutSpatialDims(layout);
  p.n = n;
  p.c = c;
  p.k = k;
  for (int i = 0; i < p.spatial_dims; ++i) {
    p.input[i] = in;
    p.filter[i] = filt;
    p.padding[i] = pad;
    p.stride[i] = stride;
    p.dilation[i] = dil;
  }
  p.groups = groups;
  p.input_type = type;
  p.output_type = type;
  p.compute_type =
      type == DataType::kDouble ? DataType::kDouble : DataType::kFloat;
  p.allow_tensor_cores = true;
  p.allow_tf32 = type == DataType::kFloat && tf32;
  return p;
}

}  // namespace tunedb

#endif  // TUNEDB_TESTS_GPU_GPU_TEST_UTIL_H_
