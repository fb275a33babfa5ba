#include "cudnn/cpu_reference.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "cudnn/conv_operands.h"

namespace tunedb {
namespace {

// Spatial loops always run over three dimensions; a 2-D problem gets a
// leading one of size 1 (and stride 0).
constexpr int kDims = ConvProblem::kMaxSpatialDims;
using Spatial = std::array<int64_t, kDims>;

// Packed strides of an operand as {n or k, c, s0, s1, s2}.
std::array<int64_t, kDims + 2> Strides5(const ConvProblem& p,
                                        ConvOperand operand) {
  const std::vector<int64_t> s =
      PackedStrides(OperandDims(p, operand), IsChannelsLast(p.layout));
  std::array<int64_t, kDims + 2> r = {s[0], s[1], 0, 0, 0};
  for (int i = 0; i < p.spatial_dims; ++i) {
    r[2 + kDims - p.spatial_dims + i] = s[2 + i];
  }
  return r;
}

// A spatial property padded to three dimensions with `fill`.
template <typename Of>
Spatial Padded(const ConvProblem& p, int64_t fill, Of of) {
  Spatial r;
  r.fill(fill);
  for (int i = 0; i < p.spatial_dims; ++i) {
    r[kDims - p.spatial_dims + i] = of(i);
  }
  return r;
}

}  // namespace

int64_t ConvMultiplyAccumulates(const ConvProblem& p) {
  int64_t macs = p.n * p.k * (p.c / p.groups);
  for (int i = 0; i < p.spatial_dims; ++i) {
    macs *= p.OutputSize(i) * p.filter[i];
  }
  return macs;
}

absl::StatusOr<std::vector<float>> CpuConvolution(const ConvProblem& p,
                                                  const std::vector<float>& x,
                                                  const std::vector<float>& w,
                                                  const std::vector<float>& y) {
  RETURN_IF_ERROR(p.Validate());
  const PassRoles roles = RolesOf(p.op);
  const std::array<const std::vector<float>*, kConvOperandCount> operands = {
      &x, &w, &y};
  for (ConvOperand in : {roles.in_a, roles.in_b}) {
    const size_t want = static_cast<size_t>(OperandElements(p, in));
    const size_t got = operands[static_cast<int>(in)]->size();
    if (got != want) {
      constexpr const char* kNames[kConvOperandCount] = {"x", "w", "y"};
      return absl::InvalidArgumentError(
          absl::StrCat("CPU reference: ", kNames[static_cast<int>(in)], " has ",
                       got, " elements, the problem needs ", want));
    }
  }
  const float* a = operands[static_cast<int>(roles.in_a)]->data();
  const float* b = operands[static_cast<int>(roles.in_b)]->data();
  const int ia = static_cast<int>(roles.in_a);
  const int ib = static_cast<int>(roles.in_b);
  const int io = static_cast<int>(roles.out);

  const Spatial in = Padded(p, 1, [&](int i) { return p.input[i]; });
  const Spatial out = Padded(p, 1, [&](int i) { return p.OutputSize(i); });
  const Spatial flt = Padded(p, 1, [&](int i) { return p.filter[i]; });
  const Spatial st = Padded(p, 1, [&](int i) { return p.stride[i]; });
  const Spatial pd = Padded(p, 0, [&](int i) { return p.padding[i]; });
  const Spatial dl = Padded(p, 1, [&](int i) { return p.dilation[i]; });
  const auto xst = Strides5(p, ConvOperand::kX);
  const auto wst = Strides5(p, ConvOperand::kW);
  const auto yst = Strides5(p, ConvOperand::kY);
  const int64_t cg = p.c / p.groups, kg = p.k / p.groups;
  const bool flip = p.mode == ConvMode::kConvolution;

  // Every (x, w, y) element triple that meets in one multiply-accumulate:
  // out[io] += a[ia] * b[ib], the same loop for all three passes.
  std::vector<double> acc(static_cast<size_t>(OperandElements(p, roles.out)),
                          0.0);
  std::array<int64_t, kConvOperandCount> at{};  // element index per operand
  for (int64_t n = 0; n < p.n; ++n) {
    for (int64_t k = 0; k < p.k; ++k) {
      const int64_t g = k / kg;
      for (int64_t o0 = 0; o0 < out[0]; ++o0) {
        for (int64_t o1 = 0; o1 < out[1]; ++o1) {
          for (int64_t o2 = 0; o2 < out[2]; ++o2) {
            at[2] = n * yst[0] + k * yst[1] + o0 * yst[2] + o1 * yst[3] +
                    o2 * yst[4];
            for (int64_t ci = 0; ci < cg; ++ci) {
              const int64_t c = g * cg + ci;
              for (int64_t f0 = 0; f0 < flt[0]; ++f0) {
                const int64_t i0 = o0 * st[0] - pd[0] + f0 * dl[0];
                if (i0 < 0 || i0 >= in[0]) continue;
                for (int64_t f1 = 0; f1 < flt[1]; ++f1) {
                  const int64_t i1 = o1 * st[1] - pd[1] + f1 * dl[1];
                  if (i1 < 0 || i1 >= in[1]) continue;
                  for (int64_t f2 = 0; f2 < flt[2]; ++f2) {
                    const int64_t i2 = o2 * st[2] - pd[2] + f2 * dl[2];
                    if (i2 < 0 || i2 >= in[2]) continue;
                    at[0] = n * xst[0] + c * xst[1] + i0 * xst[2] +
                            i1 * xst[3] + i2 * xst[4];
                    const int64_t g0 = flip ? flt[0] - 1 - f0 : f0;
                    const int64_t g1 = flip ? flt[1] - 1 - f1 : f1;
                    const int64_t g2 = flip ? flt[2] - 1 - f2 : f2;
                    at[1] = k * wst[0] + ci * wst[1] + g0 * wst[2] +
                            g1 * wst[3] + g2 * wst[4];
                    acc[at[io]] += static_cast<double>(a[at[ia]]) * b[at[ib]];
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return std::vector<float>(acc.begin(), acc.end());
}

}  // namespace tunedb
