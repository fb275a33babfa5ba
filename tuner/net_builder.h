// NetBuilder: describes a network layer by layer and records its convolutions.
//
// The built-in model shape sets are generated, not typed in: each architecture
// is written as a sequence of operations on symbolic tensors (channels and
// spatial size, no data) — conv, transposed conv, pooling, concatenation,
// residual add — and the builder computes every output size the way the
// framework would, checking that residual adds and concatenations line up.
// The convolutions it records are what `tunedb prewarm --model` tunes.
//
// Errors (a spatial size that drops below 1, mismatched residual shapes, an
// input size the architecture cannot take) are remembered: the first one is
// returned by status(), later operations on a failed builder are no-ops.
//
// Thread safety: not thread-safe; one builder per thread.
#ifndef TUNEDB_TUNER_NET_BUILDER_H_
#define TUNEDB_TUNER_NET_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/record_labels.h"
#include "tunedb/problem.h"

namespace tunedb::tuner {

using Dims = ConvProblem::Dims;

// A symbolic activation tensor (per sample): channels and spatial sizes.
struct Tensor {
  int64_t channels = 0;
  Dims spatial{};  // the first `spatial_dims` entries are used
  // True for the network input: a convolution reading it needs no
  // backward-data pass in training (nothing upstream wants the gradient).
  bool is_network_input = false;
};

// One convolution layer of a network, as the framework would call cuDNN.
struct ConvLayer {
  std::string name;  // e.g. "layer3.2.conv2"
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  Dims input{};   // spatial input size
  Dims output{};  // spatial output size
  Dims kernel{};
  Dims stride{};
  Dims padding{};
  Dims dilation{};
  int64_t groups = 1;
  // A transposed convolution (up-convolution). Its forward pass is cuDNN's
  // backward-data of the equivalent convolution from `output` to `input`.
  bool transposed = false;
  // Reads the network input (see Tensor::is_network_input).
  bool reads_network_input = false;

  bool depthwise() const {
    return groups > 1 && groups == in_channels && groups == out_channels;
  }
};

class NetBuilder {
 public:
  explicit NetBuilder(int spatial_dims) : spatial_dims_(spatial_dims) {}

  int spatial_dims() const { return spatial_dims_; }

  // The network input.
  Tensor Input(int64_t channels, const Dims& spatial);

  // A convolution with the same kernel, stride, padding and dilation in
  // every spatial dimension, producing `out_channels`.
  Tensor Conv(const std::string& name, const Tensor& x, int64_t out_channels,
              int64_t kernel, int64_t stride = 1, int64_t padding = 0,
              int64_t groups = 1, int64_t dilation = 1);
  // The general form (per-dimension kernel, stride, padding, dilation).
  Tensor Conv(const std::string& name, const Tensor& x, int64_t out_channels,
              const Dims& kernel, const Dims& stride, const Dims& padding,
              int64_t groups, const Dims& dilation);
  // A transposed convolution (no output padding): out = (in-1)*s - 2p + k.
  Tensor ConvTranspose(const std::string& name, const Tensor& x,
                       int64_t out_channels, int64_t kernel, int64_t stride,
                       int64_t padding = 0);

  // Max or average pooling: out = floor((in + 2p - k) / s) + 1.
  Tensor Pool(const Tensor& x, int64_t kernel, int64_t stride,
              int64_t padding = 0);
  // Pooling that must divide the size exactly (U-Net: an odd size is an
  // error naming the input size, as the architecture requires).
  Tensor PoolExact(const Tensor& x, int64_t factor);
  // Global average pooling to 1x1(x1).
  Tensor GlobalPool(const Tensor& x);
  // Element-wise add (residual): shapes must be equal.
  Tensor Add(const std::string& where, const Tensor& a, const Tensor& b);
  // Channel concatenation: spatial sizes must be equal.
  Tensor Concat(const std::string& where, const Tensor& a, const Tensor& b);
  // Center crop to `like`'s spatial size (U-Net skip connections).
  Tensor CropTo(const std::string& where, const Tensor& x, const Tensor& like);

  const std::vector<ConvLayer>& layers() const { return layers_; }
  const absl::Status& status() const { return status_; }

 private:
  Dims Uniform(int64_t v) const;
  std::string DimsText(const Dims& d) const;
  void Fail(const std::string& message);

  const int spatial_dims_;
  std::vector<ConvLayer> layers_;
  absl::Status status_;
};

// "56x56" for the first `spatial_dims` entries: common/record_labels.h.
using ::tunedb::DimsToText;

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_NET_BUILDER_H_
