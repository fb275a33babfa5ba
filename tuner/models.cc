#include "tuner/models.h"

#include <cctype>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tuner/model_generators.h"

namespace tunedb::tuner {
namespace {

Dims D2(int64_t h, int64_t w) { return {h, w, 0}; }
Dims D3(int64_t d, int64_t h, int64_t w) { return {d, h, w}; }

std::string Normalize(absl::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '-' || c == '_' || c == ' ') continue;
    out.push_back(
        static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

}  // namespace

const std::vector<ModelInfo>& Models() {
  static const auto* models = new std::vector<ModelInfo>{
      {"resnet18", "ResNet-18 (torchvision, basic blocks)", 2, 3, D2(224, 224),
       &BuildResNet18},
      {"resnet34", "ResNet-34 (torchvision, basic blocks)", 2, 3, D2(224, 224),
       &BuildResNet34},
      {"resnet50", "ResNet-50 v1.5 (torchvision, bottlenecks)", 2, 3,
       D2(224, 224), &BuildResNet50},
      {"resnet101", "ResNet-101 v1.5 (torchvision, bottlenecks)", 2, 3,
       D2(224, 224), &BuildResNet101},
      {"resnet152", "ResNet-152 v1.5 (torchvision, bottlenecks)", 2, 3,
       D2(224, 224), &BuildResNet152},
      {"vgg16", "VGG-16 (configuration D)", 2, 3, D2(224, 224), &BuildVgg16},
      {"mobilenetv2",
       "MobileNetV2 1.0 (depthwise separable, inverted residuals)", 2, 3,
       D2(224, 224), &BuildMobileNetV2},
      {"efficientnetb0", "EfficientNet-B0 (MBConv + squeeze-excitation)", 2, 3,
       D2(224, 224), &BuildEfficientNetB0},
      {"unet", "U-Net, 2-D, unpadded convolutions as in the paper", 2, 1,
       D2(572, 572), &BuildUNet},
      {"unetsame", "U-Net, 2-D, padded (same-size) convolutions", 2, 3,
       D2(256, 256), &BuildUNetSame},
      {"unet3d", "3-D U-Net (Cicek et al.), unpadded, D x H x W input", 3, 3,
       D3(116, 132, 132), &BuildUNet3d},
      {"r3d18", "R3D-18 video ResNet (torchvision), T x H x W input", 3, 3,
       D3(16, 112, 112), &BuildR3d18},
  };
  return *models;
}

absl::StatusOr<const ModelInfo*> FindModel(absl::string_view name) {
  const std::string wanted = Normalize(name);
  std::vector<std::string> names;
  for (const ModelInfo& m : Models()) {
    if (Normalize(m.name) == wanted) return &m;
    names.push_back(m.name);
  }
  return absl::NotFoundError(
      absl::StrCat("unknown model '", name,
                   "'; built-in models: ", absl::StrJoin(names, ", ")));
}

absl::StatusOr<std::vector<int64_t>> ParseInputSize(absl::string_view text,
                                                    int spatial_dims) {
  std::vector<int64_t> sizes;
  for (absl::string_view part : absl::StrSplit(text, absl::ByAnyChar("x,"))) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(part, &v) || v < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--input '", text, "': expected positive sizes like 224 or ",
          spatial_dims == 3 ? "16x112x112" : "224x224"));
    }
    sizes.push_back(v);
  }
  if (sizes.size() == 1) sizes.assign(spatial_dims, sizes[0]);
  if (static_cast<int>(sizes.size()) != spatial_dims) {
    return absl::InvalidArgumentError(
        absl::StrCat("--input '", text, "': this model takes ", spatial_dims,
                     " spatial sizes, got ", sizes.size()));
  }
  return sizes;
}

absl::StatusOr<BuiltModel> BuildModel(const ModelInfo& model,
                                      const std::vector<int64_t>& input) {
  BuiltModel built;
  built.info = &model;
  built.input = model.default_input;
  if (!input.empty()) {
    if (static_cast<int>(input.size()) != model.spatial_dims) {
      return absl::InvalidArgumentError(
          absl::StrCat(model.name, " takes ", model.spatial_dims,
                       " spatial input sizes, got ", input.size()));
    }
    for (int i = 0; i < model.spatial_dims; ++i) built.input[i] = input[i];
  }
  NetBuilder b(model.spatial_dims);
  built.output = model.build(b, b.Input(model.input_channels, built.input));
  if (!b.status().ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        model.name, " at input ", DimsToText(built.input, model.spatial_dims),
        ": ", b.status().message()));
  }
  built.layers = b.layers();
  return built;
}

absl::StatusOr<BuiltModel> BuildModelFlag(absl::string_view name,
                                          absl::string_view input) {
  absl::StatusOr<const ModelInfo*> model = FindModel(name);
  if (!model.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--model: ", model.status().message()));
  }
  std::vector<int64_t> size;
  if (!input.empty()) {
    absl::StatusOr<std::vector<int64_t>> parsed =
        ParseInputSize(input, (*model)->spatial_dims);
    if (!parsed.ok()) return parsed.status();
    size = *std::move(parsed);
  }
  return BuildModel(**model, size);
}

}  // namespace tunedb::tuner
