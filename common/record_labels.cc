#include "common/record_labels.h"

#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tunedb {

std::string DimsToText(const ConvProblem::Dims& d, int spatial_dims) {
  std::vector<int64_t> v(d.begin(), d.begin() + spatial_dims);
  return absl::StrJoin(v, "x");
}

std::string ShapeSummary(const ConvProblem& p) {
  const int d = p.spatial_dims;
  std::string s =
      absl::StrCat("n", p.n, " c", p.c, " k", p.k, " in",
                   DimsToText(p.input, d), " f", DimsToText(p.filter, d), " s",
                   DimsToText(p.stride, d), " p", DimsToText(p.padding, d));
  bool dilated = false;
  for (int i = 0; i < d; ++i) dilated |= p.dilation[i] != 1;
  if (dilated) absl::StrAppend(&s, " d", DimsToText(p.dilation, d));
  if (p.groups != 1) absl::StrAppend(&s, " g", p.groups);
  return s;
}

std::string TypeSummary(const ConvProblem& p) {
  std::string s(DataTypeName(p.input_type));
  if (p.compute_type != p.input_type) {
    absl::StrAppend(&s, "/", std::string(DataTypeName(p.compute_type)), "acc");
  }
  if (p.allow_tf32) absl::StrAppend(&s, "+tf32");
  if (!p.allow_tensor_cores) absl::StrAppend(&s, " no-tc");
  return s;
}

std::string AlgoLabel(const AlgoResult& r) {
  return absl::StrCat(r.algo, " ", std::string(MathTypeName(r.math_type)));
}

}  // namespace tunedb
