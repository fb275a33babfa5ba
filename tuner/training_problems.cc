#include "tuner/training_problems.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/enum_names.h"

namespace tunedb::tuner {
namespace {

std::string Lower(absl::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (c == '_') c = '-';
  }
  return out;
}

// Names as Lower() leaves them; the first of each preset is its name.
constexpr EnumNames<DtypePreset, 14> kDtypePresets(
    "dtype", {{{DtypePreset::kFp32, "fp32"},
               {DtypePreset::kFp32, "f32"},
               {DtypePreset::kFp32, "float"},
               {DtypePreset::kFp32, "float32"},
               {DtypePreset::kFp32NoTf32, "fp32-no-tf32"},
               {DtypePreset::kFp32NoTf32, "fp32-notf32"},
               {DtypePreset::kFp32NoTf32, "tf32-off"},
               {DtypePreset::kFp32NoTf32, "fp32-strict"},
               {DtypePreset::kFp16, "fp16"},
               {DtypePreset::kFp16, "f16"},
               {DtypePreset::kFp16, "half"},
               {DtypePreset::kFp16, "float16"},
               {DtypePreset::kBf16, "bf16"},
               {DtypePreset::kBf16, "bfloat16"}}});

// The passes --ops names, as Lower() leaves them ("all" is every pass).
constexpr EnumNames<ConvOp, 7> kOpNames(
    "op", {{{ConvOp::kForward, "fwd"},
            {ConvOp::kForward, "forward"},
            {ConvOp::kForward, "inference"},
            {ConvOp::kBackwardData, "bwd-data"},
            {ConvOp::kBackwardData, "dgrad"},
            {ConvOp::kBackwardFilter, "bwd-filter"},
            {ConvOp::kBackwardFilter, "wgrad"}}});

}  // namespace

absl::StatusOr<DtypePreset> ParseDtypePreset(absl::string_view text) {
  const std::string t = Lower(absl::StripAsciiWhitespace(text));
  if (std::optional<DtypePreset> preset = kDtypePresets.Find(t)) {
    return *preset;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "dtype '", text, "' is not one of ", kDtypePresets.NameList()));
}

std::string DtypePresetName(DtypePreset preset) {
  return std::string(kDtypePresets.Name(preset));
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
    } else if (std::optional<ConvOp> op = kOpNames.Find(part)) {
      add(*op);
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

absl::StatusOr<std::vector<ProblemOptions>> ProblemCombinations(
    const std::vector<int64_t>& batches, const std::vector<std::string>& dtypes,
    const std::vector<std::string>& layouts, absl::string_view ops_text) {
  auto ops = ParseOps(ops_text);
  if (!ops.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--ops: ", ops.status().message()));
  }
  std::vector<ProblemOptions> out;
  for (int64_t batch : batches) {
    if (batch < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--batch ", batch, ": must be >= 1"));
    }
    for (const std::string& d : dtypes) {
      auto dtype = ParseDtypePreset(d);
      if (!dtype.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--dtype: ", dtype.status().message()));
      }
      for (const std::string& l : layouts) {
        absl::StatusOr<Layout> layout = ParseLayout(absl::AsciiStrToLower(l));
        if (!layout.ok()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "--layout '", l, "' is not nchw or nhwc (ncdhw/ndhwc for 3-D)"));
        }
        ProblemOptions o;
        o.batch = batch;
        o.dtype = *dtype;
        o.channels_last = IsChannelsLast(*layout);
        o.ops = *ops;
        out.push_back(o);
      }
    }
  }
  return out;
}

}  // namespace tunedb::tuner
