#include "tuner/training_problems.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tunedb::cli {
namespace {

std::string Lower(absl::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (c == '_') c = '-';
  }
  return out;
}

}  // namespace

absl::StatusOr<DtypePreset> ParseDtypePreset(absl::string_view text) {
  const std::string t = Lower(absl::StripAsciiWhitespace(text));
  if (t == "fp32" || t == "f32" || t == "float" || t == "float32") {
    return DtypePreset::kFp32;
  }
  if (t == "fp32-no-tf32" || t == "fp32-notf32" || t == "tf32-off" ||
      t == "fp32-strict") {
    return DtypePreset::kFp32NoTf32;
  }
  if (t == "fp16" || t == "f16" || t == "half" || t == "float16") {
    return DtypePreset::kFp16;
  }
  if (t == "bf16" || t == "bfloat16") return DtypePreset::kBf16;
  return absl::InvalidArgumentError(absl::StrCat(
      "dtype '", text, "' is not one of fp32, fp32-no-tf32, fp16, bf16"));
}

std::string DtypePresetName(DtypePreset preset) {
  switch (preset) {
    case DtypePreset::kFp32:
      return "fp32";
    case DtypePreset::kFp32NoTf32:
      return "fp32-no-tf32";
    case DtypePreset::kFp16:
      return "fp16";
    case DtypePreset::kBf16:
      return "bf16";
  }
  return "?";
}

void ApplyDtypePreset(DtypePreset preset, ConvProblem& p) {
  p.compute_type = DataType::kFloat;
  p.allow_tensor_cores = true;
  switch (preset) {
    case DtypePreset::kFp32:
      p.input_type = p.output_type = DataType::kFloat;
      p.allow_tf32 = true;
      break;
    case DtypePreset::kFp32NoTf32:
      p.input_type = p.output_type = DataType::kFloat;
      p.allow_tf32 = false;
      break;
    case DtypePreset::kFp16:
      p.input_type = p.output_type = DataType::kHalf;
      p.allow_tf32 = false;
      break;
    case DtypePreset::kBf16:
      p.input_type = p.output_type = DataType::kBFloat16;
      p.allow_tf32 = false;
      break;
  }
}

absl::StatusOr<std::vector<ConvOp>> ParseOps(absl::string_view text) {
  std::vector<ConvOp> ops;
  auto add = [&ops](ConvOp op) {
    if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
  };
  for (absl::string_view raw :
       absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    const std::string part = Lower(absl::StripAsciiWhitespace(raw));
    if (part == "all" || part == "training") {
      add(ConvOp::kForward);
      add(ConvOp::kBackwardData);
      add(ConvOp::kBackwardFilter);
    } else if (part == "fwd" || part == "forward" || part == "inference") {
      add(ConvOp::kForward);
    } else if (part == "bwd-data" || part == "dgrad") {
      add(ConvOp::kBackwardData);
    } else if (part == "bwd-filter" || part == "wgrad") {
      add(ConvOp::kBackwardFilter);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "op '", raw, "' is not one of fwd, bwd_data, bwd_filter, all"));
    }
  }
  if (ops.empty()) {
    return absl::InvalidArgumentError(
        "no ops given (use fwd,bwd_data,bwd_filter)");
  }
  return ops;
}

std::vector<PlannedProblem> LayerProblems(const std::vector<ConvLayer>& layers,
                                          int spatial_dims,
                                          const ProblemOptions& options,
                                          const std::string& model_name) {
  std::vector<PlannedProblem> out;
  for (const ConvLayer& layer : layers) {
    // The convolution cuDNN sees: for a transposed layer, the one from its
    // output back to its input.
    ConvProblem base;
    base.spatial_dims = spatial_dims;
    base.n = options.batch;
    base.c = layer.transposed ? layer.out_channels : layer.in_channels;
    base.k = layer.transposed ? layer.in_channels : layer.out_channels;
    base.input = layer.transposed ? layer.output : layer.input;
    base.filter = layer.kernel;
    base.padding = layer.padding;
    base.stride = layer.stride;
    base.dilation = layer.dilation;
    base.groups = layer.groups;
    base.mode = ConvMode::kCrossCorrelation;
    base.layout = LayoutFor(options.channels_last, spatial_dims);
    ApplyDtypePreset(options.dtype, base);
    for (ConvOp pass : options.ops) {
      if (pass == ConvOp::kBackwardData && layer.reads_network_input) continue;
      ConvOp op = pass;
      if (layer.transposed && pass == ConvOp::kForward) {
        op = ConvOp::kBackwardData;
      } else if (layer.transposed && pass == ConvOp::kBackwardData) {
        op = ConvOp::kForward;
      }
      PlannedProblem planned;
      planned.problem = base;
      planned.problem.op = op;
      planned.source = absl::StrCat(model_name, "/", layer.name, " ",
                                    std::string(ConvOpName(pass)));
      out.push_back(std::move(planned));
    }
  }
  return out;
}

}  // namespace tunedb::cli
