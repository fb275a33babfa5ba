// ResNet-18/34/50/101/152 (He et al. 2015) in torchvision's v1.5 form, and
// R3D-18 (Tran et al. 2018, torchvision.models.video.r3d_18).
#include <array>
#include <string>

#include "absl/strings/str_cat.h"
#include "tuner/model_generators.h"

namespace tunedb::tuner {
namespace {

// Two 3x3 convolutions; a 1x1 projection when the shape changes.
Tensor BasicBlock(NetBuilder& b, const std::string& name, const Tensor& x,
                  int64_t planes, int64_t stride) {
  Tensor y = b.Conv(name + ".conv1", x, planes, 3, stride, 1);
  y = b.Conv(name + ".conv2", y, planes, 3, 1, 1);
  Tensor shortcut = x;
  if (stride != 1 || x.channels != planes) {
    shortcut = b.Conv(name + ".downsample.0", x, planes, 1, stride, 0);
  }
  return b.Add(name, y, shortcut);
}

// 1x1 reduce, 3x3 (carrying the stride, v1.5), 1x1 expand by 4.
Tensor Bottleneck(NetBuilder& b, const std::string& name, const Tensor& x,
                  int64_t planes, int64_t stride) {
  Tensor y = b.Conv(name + ".conv1", x, planes, 1, 1, 0);
  y = b.Conv(name + ".conv2", y, planes, 3, stride, 1);
  y = b.Conv(name + ".conv3", y, planes * 4, 1, 1, 0);
  Tensor shortcut = x;
  if (stride != 1 || x.channels != planes * 4) {
    shortcut = b.Conv(name + ".downsample.0", x, planes * 4, 1, stride, 0);
  }
  return b.Add(name, y, shortcut);
}

Tensor ResNet(NetBuilder& b, const Tensor& input,
              const std::array<int, 4>& blocks, bool bottleneck) {
  Tensor x = b.Conv("conv1", input, 64, 7, 2, 3);
  x = b.Pool(x, 3, 2, 1);  // maxpool
  const std::array<int64_t, 4> planes = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage) {
    for (int i = 0; i < blocks[stage]; ++i) {
      const int64_t stride = (stage > 0 && i == 0) ? 2 : 1;
      const std::string name = absl::StrCat("layer", stage + 1, ".", i);
      x = bottleneck ? Bottleneck(b, name, x, planes[stage], stride)
                     : BasicBlock(b, name, x, planes[stage], stride);
    }
  }
  return x;
}

}  // namespace

Tensor BuildResNet18(NetBuilder& b, const Tensor& x) {
  return ResNet(b, x, {2, 2, 2, 2}, false);
}
Tensor BuildResNet34(NetBuilder& b, const Tensor& x) {
  return ResNet(b, x, {3, 4, 6, 3}, false);
}
Tensor BuildResNet50(NetBuilder& b, const Tensor& x) {
  return ResNet(b, x, {3, 4, 6, 3}, true);
}
Tensor BuildResNet101(NetBuilder& b, const Tensor& x) {
  return ResNet(b, x, {3, 4, 23, 3}, true);
}
Tensor BuildResNet152(NetBuilder& b, const Tensor& x) {
  return ResNet(b, x, {3, 8, 36, 3}, true);
}

Tensor BuildR3d18(NetBuilder& b, const Tensor& input) {
  // Stem: 3x7x7 (time x height x width), stride 1x2x2, padding 1x3x3; no
  // max pooling.
  Tensor x = b.Conv("stem.0", input, 64, {3, 7, 7}, {1, 2, 2}, {1, 3, 3}, 1,
                    {1, 1, 1});
  const std::array<int64_t, 4> planes = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage) {
    for (int i = 0; i < 2; ++i) {
      const int64_t stride = (stage > 0 && i == 0) ? 2 : 1;
      x = BasicBlock(b, absl::StrCat("layer", stage + 1, ".", i), x,
                     planes[stage], stride);
    }
  }
  return x;
}

}  // namespace tunedb::tuner
