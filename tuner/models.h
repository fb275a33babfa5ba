// The built-in model shape sets of `tunedb prewarm --model` and `tunedb
// models`.
//
// Each model is a generator written from its architecture's definition (see
// docs/models.md for the sources and conventions) on a NetBuilder; building
// it at an input size yields every convolution layer with its exact shapes.
//
// Thread safety: the registry is immutable; BuildModel is reentrant.
#ifndef TUNEDB_TUNER_MODELS_H_
#define TUNEDB_TUNER_MODELS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tuner/net_builder.h"

namespace tunedb::tuner {

struct ModelInfo {
  std::string name;         // "resnet50"
  std::string description;  // one line
  int spatial_dims = 2;     // 2 or 3
  int64_t input_channels = 3;
  Dims default_input{};  // e.g. 224x224; 3-D models: D, H, W
  // Writes the network on `b` from input `x`; returns the network output.
  Tensor (*build)(NetBuilder& b, const Tensor& x) = nullptr;
};

// What BuildModel returns.
struct BuiltModel {
  const ModelInfo* info = nullptr;
  Dims input{};
  std::vector<ConvLayer> layers;
  Tensor output;  // the last feature map (before any classifier)
};

// Every built-in model, in the order `tunedb models` lists them.
const std::vector<ModelInfo>& Models();

// The model named `name` (case-insensitive; "-" and "_" ignored, so
// "ResNet-50" finds "resnet50"); NOT_FOUND listing the names otherwise.
absl::StatusOr<const ModelInfo*> FindModel(absl::string_view name);

// Builds `model` at `input` (spatial sizes; empty = the default). An input
// the architecture cannot take is INVALID_ARGUMENT saying why.
absl::StatusOr<BuiltModel> BuildModel(const ModelInfo& model,
                                      const std::vector<int64_t>& input);

// Parses "224", "224x224" or "16x112x112" into sizes for a model with
// `spatial_dims` dimensions (one number means the same in every dimension).
absl::StatusOr<std::vector<int64_t>> ParseInputSize(absl::string_view text,
                                                    int spatial_dims);

// The model a command's `--model NAME` names, built at its `--input INPUT`
// ("" for the model's default): INVALID_ARGUMENT naming --model for a name
// that is not built in; ParseInputSize's or BuildModel's error otherwise.
absl::StatusOr<BuiltModel> BuildModelFlag(absl::string_view name,
                                          absl::string_view input);

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_MODELS_H_
