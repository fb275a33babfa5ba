// ConvShape: a convolution described by plain numbers, as a framework holds
// it, and MakeConvProblem, which turns it into the ConvProblem of a key.
// Needs no CUDA.
//
//   tunedb::ConvShape s;
//   s.n = 64; s.c = 3; s.k = 64;
//   s.input = {224, 224}; s.filter = {7, 7};
//   s.padding = {3, 3}; s.stride = {2, 2};
//   tunedb::ConvProblem p = tunedb::MakeConvProblem(s).value();
//
// Thread safety: a plain value and a stateless function.
#ifndef TUNEDB_CONV_SHAPE_H_
#define TUNEDB_CONV_SHAPE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "tunedb/problem.h"

namespace tunedb {

struct ConvShape {
  // Which pass. Default: forward.
  ConvOp op = ConvOp::kForward;
  // Batch, input channels, output channels. Defaults: 1.
  int64_t n = 1;
  int64_t c = 1;
  int64_t k = 1;
  // Spatial sizes of the input and the filter: 2 (H, W) or 3 (D, H, W)
  // values. Required.
  std::vector<int64_t> input;
  std::vector<int64_t> filter;
  // Per spatial dimension; empty means zero padding, unit stride and
  // dilation. Default: empty.
  std::vector<int64_t> padding;
  std::vector<int64_t> stride;
  std::vector<int64_t> dilation;
  // Groups (c and k must be multiples). Default: 1.
  int64_t groups = 1;
  // Element type of x, w and y. Default: fp32.
  DataType data_type = DataType::kFloat;
  // Accumulation type. Default: fp32.
  DataType compute_type = DataType::kFloat;
  // Channels-last activations (NHWC / NDHWC). Default: false.
  bool channels_last = false;
  // Default: cross-correlation, as every framework.
  ConvMode mode = ConvMode::kCrossCorrelation;
  // Whether tensor-core algorithms may be used. Default: true.
  bool allow_tensor_cores = true;
  // fp32 only: whether tensor cores may round to TF32 (ignored, and stored
  // false, for other types). Default: true.
  bool allow_tf32 = true;
};

// The validated problem, or INVALID_ARGUMENT naming what is wrong.
absl::StatusOr<ConvProblem> MakeConvProblem(const ConvShape& shape);

}  // namespace tunedb

#endif  // TUNEDB_CONV_SHAPE_H_
