#include "tunedb/conv_shape.h"

#include "absl/strings/str_cat.h"
#include "common/math_policy.h"
#include "common/status_macros.h"

namespace tunedb {
namespace {

absl::Status Fill(const std::vector<int64_t>& in, const char* field, int dims,
                  int64_t empty_value, ConvProblem::Dims* out) {
  *out = {};
  if (in.empty()) {
    for (int i = 0; i < dims; ++i) (*out)[i] = empty_value;
    return absl::OkStatus();
  }
  if (static_cast<int>(in.size()) != dims) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": has ", in.size(), " values, expected ", dims));
  }
  for (int i = 0; i < dims; ++i) (*out)[i] = in[i];
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ConvProblem> MakeConvProblem(const ConvShape& s) {
  const int dims = static_cast<int>(s.input.size());
  if (dims != 2 && dims != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("input: has ", dims, " spatial sizes, expected 2 or 3"));
  }
  ConvProblem p;
  p.op = s.op;
  p.spatial_dims = dims;
  p.n = s.n;
  p.c = s.c;
  p.k = s.k;
  RETURN_IF_ERROR(Fill(s.input, "input", dims, 0, &p.input));
  if (s.filter.empty()) return absl::InvalidArgumentError("filter: empty");
  RETURN_IF_ERROR(Fill(s.filter, "filter", dims, 0, &p.filter));
  RETURN_IF_ERROR(Fill(s.padding, "padding", dims, 0, &p.padding));
  RETURN_IF_ERROR(Fill(s.stride, "stride", dims, 1, &p.stride));
  RETURN_IF_ERROR(Fill(s.dilation, "dilation", dims, 1, &p.dilation));
  p.groups = s.groups;
  p.mode = s.mode;
  p.input_type = s.data_type;
  p.output_type = s.data_type;
  p.compute_type = s.compute_type;
  p.layout = LayoutFor(s.channels_last, dims);
  p.allow_tensor_cores = s.allow_tensor_cores;
  p.allow_tf32 = KeyAllowsTf32(s.data_type, s.allow_tensor_cores, s.allow_tf32);
  RETURN_IF_ERROR(p.Validate());
  return p;
}

}  // namespace tunedb
