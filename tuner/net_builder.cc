#include "tuner/net_builder.h"

#include "absl/strings/str_cat.h"

namespace tunedb::tuner {
namespace {

// The layer that turns x into y (its output channels are y's).
ConvLayer LayerBetween(const std::string& name, const Tensor& x,
                       const Tensor& y, const Dims& kernel, const Dims& stride,
                       const Dims& padding, const Dims& dilation,
                       int64_t groups) {
  ConvLayer layer;
  layer.name = name;
  layer.in_channels = x.channels;
  layer.out_channels = y.channels;
  layer.input = x.spatial;
  layer.output = y.spatial;
  layer.kernel = kernel;
  layer.stride = stride;
  layer.padding = padding;
  layer.dilation = dilation;
  layer.groups = groups;
  layer.reads_network_input = x.is_network_input;
  return layer;
}

}  // namespace

Dims NetBuilder::Uniform(int64_t v) const {
  Dims d{};
  for (int i = 0; i < spatial_dims_; ++i) d[i] = v;
  return d;
}

std::string NetBuilder::DimsText(const Dims& d) const {
  return DimsToText(d, spatial_dims_);
}

void NetBuilder::Fail(const std::string& message) {
  if (status_.ok()) status_ = absl::InvalidArgumentError(message);
}

Tensor NetBuilder::Input(int64_t channels, const Dims& spatial) {
  Tensor t;
  t.channels = channels;
  t.spatial = spatial;
  t.is_network_input = true;
  for (int i = 0; i < spatial_dims_; ++i) {
    if (spatial[i] < 1)
      Fail(absl::StrCat("input size ", DimsText(spatial), " must be positive"));
  }
  return t;
}

Tensor NetBuilder::Conv(const std::string& name, const Tensor& x,
                        int64_t out_channels, int64_t kernel, int64_t stride,
                        int64_t padding, int64_t groups, int64_t dilation) {
  return Conv(name, x, out_channels, Uniform(kernel), Uniform(stride),
              Uniform(padding), groups, Uniform(dilation));
}

Tensor NetBuilder::Conv(const std::string& name, const Tensor& x,
                        int64_t out_channels, const Dims& kernel,
                        const Dims& stride, const Dims& padding, int64_t groups,
                        const Dims& dilation) {
  Tensor y;
  y.channels = out_channels;
  if (!status_.ok()) return y;
  if (groups < 1 || x.channels % groups != 0 || out_channels % groups != 0) {
    Fail(absl::StrCat(name, ": groups=", groups, " does not divide channels ",
                      x.channels, " -> ", out_channels));
    return y;
  }
  for (int i = 0; i < spatial_dims_; ++i) {
    const int64_t effective = dilation[i] * (kernel[i] - 1) + 1;
    y.spatial[i] = (x.spatial[i] + 2 * padding[i] - effective) / stride[i] + 1;
    if (x.spatial[i] + 2 * padding[i] < effective) y.spatial[i] = 0;
    if (y.spatial[i] < 1) {
      Fail(absl::StrCat(name, ": input ", DimsText(x.spatial),
                        " is too small for the layer (output would be empty);"
                        " use a larger --input"));
      return y;
    }
  }
  layers_.push_back(
      LayerBetween(name, x, y, kernel, stride, padding, dilation, groups));
  return y;
}

Tensor NetBuilder::ConvTranspose(const std::string& name, const Tensor& x,
                                 int64_t out_channels, int64_t kernel,
                                 int64_t stride, int64_t padding) {
  Tensor y;
  y.channels = out_channels;
  if (!status_.ok()) return y;
  for (int i = 0; i < spatial_dims_; ++i) {
    y.spatial[i] = (x.spatial[i] - 1) * stride - 2 * padding + kernel;
    if (y.spatial[i] < 1) {
      Fail(absl::StrCat(name, ": output would be empty"));
      return y;
    }
  }
  ConvLayer layer = LayerBetween(name, x, y, Uniform(kernel), Uniform(stride),
                                 Uniform(padding), Uniform(1), /*groups=*/1);
  layer.transposed = true;
  layers_.push_back(layer);
  return y;
}

Tensor NetBuilder::Pool(const Tensor& x, int64_t kernel, int64_t stride,
                        int64_t padding) {
  Tensor y;
  y.channels = x.channels;
  if (!status_.ok()) return y;
  for (int i = 0; i < spatial_dims_; ++i) {
    y.spatial[i] = (x.spatial[i] + 2 * padding - kernel) / stride + 1;
    if (x.spatial[i] + 2 * padding < kernel || y.spatial[i] < 1) {
      Fail(absl::StrCat("pooling: input ", DimsText(x.spatial),
                        " is too small; use a larger --input"));
      return y;
    }
  }
  return y;
}

Tensor NetBuilder::PoolExact(const Tensor& x, int64_t factor) {
  Tensor y;
  y.channels = x.channels;
  if (!status_.ok()) return y;
  for (int i = 0; i < spatial_dims_; ++i) {
    if (x.spatial[i] % factor != 0 || x.spatial[i] < factor) {
      Fail(absl::StrCat("pooling by ", factor, ": size ", DimsText(x.spatial),
                        " is not divisible (this --input does not fit the "
                        "architecture; see docs/models.md)"));
      return y;
    }
    y.spatial[i] = x.spatial[i] / factor;
  }
  return y;
}

Tensor NetBuilder::GlobalPool(const Tensor& x) {
  Tensor y;
  y.channels = x.channels;
  y.spatial = Uniform(1);
  return y;
}

Tensor NetBuilder::Add(const std::string& where, const Tensor& a,
                       const Tensor& b) {
  if (status_.ok() && (a.channels != b.channels || a.spatial != b.spatial)) {
    Fail(absl::StrCat(where, ": residual shapes differ: ", a.channels, "x",
                      DimsText(a.spatial), " vs ", b.channels, "x",
                      DimsText(b.spatial)));
  }
  Tensor y = a;
  y.is_network_input = false;
  return y;
}

Tensor NetBuilder::Concat(const std::string& where, const Tensor& a,
                          const Tensor& b) {
  if (status_.ok() && a.spatial != b.spatial) {
    Fail(absl::StrCat(where, ": concatenated sizes differ: ",
                      DimsText(a.spatial), " vs ", DimsText(b.spatial)));
  }
  Tensor y;
  y.channels = a.channels + b.channels;
  y.spatial = a.spatial;
  return y;
}

Tensor NetBuilder::CropTo(const std::string& where, const Tensor& x,
                          const Tensor& like) {
  Tensor y = x;
  y.is_network_input = false;
  for (int i = 0; i < spatial_dims_; ++i) {
    if (status_.ok() && like.spatial[i] > x.spatial[i]) {
      Fail(absl::StrCat(where, ": cannot crop ", DimsText(x.spatial), " to ",
                        DimsText(like.spatial)));
    }
    y.spatial[i] = like.spatial[i];
  }
  return y;
}

}  // namespace tunedb::tuner
