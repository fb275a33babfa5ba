// Turns network layers into the cuDNN convolution problems of training (or
// inference): which passes, which types, which layout.
//
// A training step runs, per convolution layer, the forward pass, the
// backward-data pass (the gradient of the layer's input) and the
// backward-filter pass (the gradient of its weights). The first convolution
// of a network reads the network input, whose gradient nobody needs, so
// frameworks skip its backward-data pass; so does this expansion.
// A transposed convolution's passes map onto the equivalent convolution: its
// forward is cuDNN's backward-data, its backward-data is cuDNN's forward.
//
// Thread safety: pure functions.
#ifndef TUNEDB_TUNER_TRAINING_PROBLEMS_H_
#define TUNEDB_TUNER_TRAINING_PROBLEMS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tunedb/problem.h"
#include "tuner/net_builder.h"

namespace tunedb::tuner {

// The numeric setups a framework runs convolutions in.
enum class DtypePreset {
  kFp32,        // f32 everywhere, TF32 tensor cores allowed (framework default)
  kFp32NoTf32,  // f32 everywhere, TF32 off (exact fp32 math)
  kFp16,        // f16 tensors, f32 accumulation, tensor cores
  kBf16,        // bf16 tensors, f32 accumulation, tensor cores
};
// "fp32", "fp32-no-tf32", "fp16", "bf16" (also "f32", "half", "float16",
// "bfloat16", "fp32-notf32", "tf32-off"); INVALID_ARGUMENT listing them.
absl::StatusOr<DtypePreset> ParseDtypePreset(absl::string_view text);
std::string DtypePresetName(DtypePreset preset);
// Sets input/output/compute type, tensor-core and TF32 flags of `problem`.
void ApplyDtypePreset(DtypePreset preset, ConvProblem& problem);

// "fwd,bwd_data,bwd_filter" (any subset, also "all", "training",
// "inference" = fwd); INVALID_ARGUMENT naming the bad entry.
absl::StatusOr<std::vector<ConvOp>> ParseOps(absl::string_view text);

struct ProblemOptions {
  int64_t batch = 32;
  DtypePreset dtype = DtypePreset::kFp32;
  // Channels-first or channels-last; for 3-D networks the matching 3-D
  // layout (nchw -> ncdhw, nhwc -> ndhwc) is used.
  bool channels_last = false;
  // The passes of each layer (in the layer's own terms: the forward of a
  // transposed conv is cuDNN's backward-data).
  std::vector<ConvOp> ops = {ConvOp::kForward, ConvOp::kBackwardData,
                             ConvOp::kBackwardFilter};
};

// Every (batch, dtype, layout) combination of the values of --batch, --dtype
// and --layout, in flag order, each with the passes of `ops` (as for --ops).
// INVALID_ARGUMENT naming the flag for a bad value.
absl::StatusOr<std::vector<ProblemOptions>> ProblemCombinations(
    const std::vector<int64_t>& batches, const std::vector<std::string>& dtypes,
    const std::vector<std::string>& layouts, absl::string_view ops);

// A problem with the layer it came from (for messages).
struct PlannedProblem {
  ConvProblem problem;
  std::string source;  // e.g. "resnet50/layer1.0.conv2 fwd"
};

// Every problem of `layers` in layer order, pass order as in options.ops.
// Not deduplicated.
std::vector<PlannedProblem> LayerProblems(const std::vector<ConvLayer>& layers,
                                          int spatial_dims,
                                          const ProblemOptions& options,
                                          const std::string& model_name);

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_TRAINING_PROBLEMS_H_
