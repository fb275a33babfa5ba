// VGG-16 (Simonyan & Zisserman 2014, configuration D), MobileNetV2 (Sandler
// et al. 2018) and EfficientNet-B0 (Tan & Le 2019), following torchvision.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tuner/model_generators.h"

namespace tunedb::tuner {
namespace {

// torchvision's _make_divisible: round to a multiple of 8, never dropping
// more than 10%.
int64_t MakeDivisible(double v, int64_t divisor = 8) {
  int64_t rounded = std::max<int64_t>(
      divisor, (static_cast<int64_t>(v + divisor / 2.0) / divisor) * divisor);
  if (rounded < 0.9 * v) rounded += divisor;
  return rounded;
}

}  // namespace

Tensor BuildVgg16(NetBuilder& b, const Tensor& input) {
  // Configuration D: 0 marks a 2x2 max pooling.
  const std::vector<int64_t> config = {64,  64,  0,   128, 128, 0,
                                       256, 256, 256, 0,   512, 512,
                                       512, 0,   512, 512, 512, 0};
  Tensor x = input;
  int index = 0;  // torchvision's features.<index>
  for (int64_t c : config) {
    if (c == 0) {
      x = b.Pool(x, 2, 2);
      index += 1;
    } else {
      x = b.Conv(absl::StrCat("features.", index), x, c, 3, 1, 1);
      index += 2;  // conv, relu
    }
  }
  return x;
}

Tensor BuildMobileNetV2(NetBuilder& b, const Tensor& input) {
  struct Stage {
    int64_t expand, channels, repeats, stride;
  };
  const std::vector<Stage> stages = {
      {1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
      {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  Tensor x = b.Conv("features.0", input, MakeDivisible(32), 3, 2, 1);
  int block = 1;
  for (const Stage& s : stages) {
    for (int i = 0; i < s.repeats; ++i, ++block) {
      const std::string name = absl::StrCat("features.", block);
      const int64_t stride = i == 0 ? s.stride : 1;
      const int64_t hidden = x.channels * s.expand;
      Tensor y = x;
      if (s.expand != 1) y = b.Conv(name + ".expand", y, hidden, 1);
      y = b.Conv(name + ".dw", y, hidden, 3, stride, 1, /*groups=*/hidden);
      y = b.Conv(name + ".project", y, MakeDivisible(s.channels), 1);
      if (stride == 1 && x.channels == y.channels) y = b.Add(name, y, x);
      x = y;
    }
  }
  return b.Conv(absl::StrCat("features.", block), x, 1280, 1);
}

Tensor BuildEfficientNetB0(NetBuilder& b, const Tensor& input) {
  struct Stage {
    int64_t expand, kernel, stride, channels, repeats;
  };
  const std::vector<Stage> stages = {
      {1, 3, 1, 16, 1},  {6, 3, 2, 24, 2},  {6, 5, 2, 40, 2}, {6, 3, 2, 80, 3},
      {6, 5, 1, 112, 3}, {6, 5, 2, 192, 4}, {6, 3, 1, 320, 1}};
  Tensor x = b.Conv("features.0", input, 32, 3, 2, 1);
  for (size_t st = 0; st < stages.size(); ++st) {
    const Stage& s = stages[st];
    for (int i = 0; i < s.repeats; ++i) {
      const std::string name = absl::StrCat("features.", st + 1, ".", i);
      const int64_t stride = i == 0 ? s.stride : 1;
      const int64_t expanded = MakeDivisible(x.channels * s.expand);
      Tensor y = x;
      if (expanded != x.channels) y = b.Conv(name + ".expand", y, expanded, 1);
      y = b.Conv(name + ".dw", y, expanded, s.kernel, stride,
                 (s.kernel - 1) / 2, /*groups=*/expanded);
      // Squeeze-and-excitation: two 1x1 convolutions on the pooled 1x1 map.
      const int64_t squeeze = std::max<int64_t>(1, x.channels / 4);
      Tensor pooled = b.GlobalPool(y);
      pooled = b.Conv(name + ".se.fc1", pooled, squeeze, 1);
      b.Conv(name + ".se.fc2", pooled, expanded, 1);
      y = b.Conv(name + ".project", y, s.channels, 1);
      if (stride == 1 && x.channels == y.channels) y = b.Add(name, y, x);
      x = y;
    }
  }
  return b.Conv("features.8", x, 1280, 1);
}

}  // namespace tunedb::tuner
