// U-Net (Ronneberger et al. 2015) and 3-D U-Net (Cicek et al. 2016).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tuner/model_generators.h"

namespace tunedb::tuner {
namespace {

// Five levels of 64..1024 channels; two 3x3 convs per level, 2x2 max pooling
// down, 2x2 up-convolutions halving the channels, skip connections cropped
// to size and concatenated, and a final 1x1 conv to 2 classes.
Tensor UNet2d(NetBuilder& b, const Tensor& input, int64_t pad) {
  const std::vector<int64_t> widths = {64, 128, 256, 512, 1024};
  std::vector<Tensor> skips;
  Tensor x = input;
  for (size_t level = 0; level < widths.size(); ++level) {
    if (level > 0) x = b.PoolExact(x, 2);
    const std::string name = absl::StrCat("down", level + 1);
    x = b.Conv(name + ".conv1", x, widths[level], 3, 1, pad);
    x = b.Conv(name + ".conv2", x, widths[level], 3, 1, pad);
    skips.push_back(x);
  }
  for (int level = static_cast<int>(widths.size()) - 2; level >= 0; --level) {
    const std::string name = absl::StrCat("up", level + 1);
    x = b.ConvTranspose(name + ".upconv", x, widths[level], 2, 2);
    x = b.Concat(name, b.CropTo(name, skips[level], x), x);
    x = b.Conv(name + ".conv1", x, widths[level], 3, 1, pad);
    x = b.Conv(name + ".conv2", x, widths[level], 3, 1, pad);
  }
  return b.Conv("final", x, 2, 1);
}

}  // namespace

Tensor BuildUNet(NetBuilder& b, const Tensor& x) { return UNet2d(b, x, 0); }
Tensor BuildUNetSame(NetBuilder& b, const Tensor& x) { return UNet2d(b, x, 1); }

Tensor BuildUNet3d(NetBuilder& b, const Tensor& input) {
  // Analysis path: channels double before each pooling (32->64, 64->128,
  // 128->256, 256->512); unpadded 3x3x3 convs; 2x2x2 max pooling.
  const std::vector<std::pair<int64_t, int64_t>> levels = {
      {32, 64}, {64, 128}, {128, 256}, {256, 512}};
  std::vector<Tensor> skips;
  Tensor x = input;
  for (size_t level = 0; level < levels.size(); ++level) {
    if (level > 0) x = b.PoolExact(x, 2);
    const std::string name = absl::StrCat("down", level + 1);
    x = b.Conv(name + ".conv1", x, levels[level].first, 3, 1, 0);
    x = b.Conv(name + ".conv2", x, levels[level].second, 3, 1, 0);
    skips.push_back(x);
  }
  // Synthesis path: 2x2x2 up-convolution keeping the channels, concatenation
  // with the cropped analysis features, two 3x3x3 convs halving them.
  for (int level = static_cast<int>(levels.size()) - 2; level >= 0; --level) {
    const std::string name = absl::StrCat("up", level + 1);
    x = b.ConvTranspose(name + ".upconv", x, x.channels, 2, 2);
    x = b.Concat(name, b.CropTo(name, skips[level], x), x);
    x = b.Conv(name + ".conv1", x, levels[level].second, 3, 1, 0);
    x = b.Conv(name + ".conv2", x, levels[level].second, 3, 1, 0);
  }
  return b.Conv("final", x, 3, 1);
}

}  // namespace tunedb::tuner
