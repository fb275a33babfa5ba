#include "cudnn/conv_ops.h"

#include "common/data_type_traits.h"
#include "common/status_macros.h"
#include "cudnn/cudnn_status.h"
#include "tunedb/cudnn_types.h"

namespace tunedb {
namespace {

template <typename Perf>
std::vector<AlgoPerf> ToAlgoPerfs(const std::vector<Perf>& perf, int returned) {
  std::vector<AlgoPerf> out;
  out.reserve(returned);
  for (int i = 0; i < returned; ++i) {
    AlgoPerf e;
    e.algo = static_cast<int>(perf[i].algo);
    e.status = perf[i].status;
    e.time_ms = perf[i].time;
    e.memory = static_cast<int64_t>(perf[i].memory);
    e.deterministic = perf[i].determinism == CUDNN_DETERMINISTIC;
    e.math = FromCudnn(perf[i].mathType);
    out.push_back(e);
  }
  return out;
}

using AlgoPerfs = absl::StatusOr<std::vector<AlgoPerf>>;

// The entries `query(requested, &returned, perf)` ranks for pass P, asking
// for all of its algorithms.
template <typename P, typename Query>
AlgoPerfs Ranking(Query query, const char* what) {
  std::vector<typename P::Perf> perf(P::kAlgoCount);
  int returned = 0;
  RETURN_IF_ERROR(
      CudnnStatusToAbsl(query(P::kAlgoCount, &returned, perf.data()), what));
  return ToAlgoPerfs(perf, returned);
}

}  // namespace

int PassAlgoCount(ConvOp op) {
  return VisitPass(op, [](auto pass) { return decltype(pass)::kAlgoCount; });
}

AlgoPerfs FindAlgorithms(cudnnHandle_t handle, ConvOp op,
                         const ConvDescriptorView& d, const ConvBuffers& b,
                         void* workspace, size_t workspace_bytes) {
  return VisitPass(op, [&](auto pass) {
    using P = decltype(pass);
    return Ranking<P>(
        [&](int requested, int* returned, typename P::Perf* perf) {
          return P::FindEx(handle, d, b, requested, returned, perf, workspace,
                           workspace_bytes);
        },
        P::kFindEx.name);
  });
}

AlgoPerfs HeuristicAlgorithms(cudnnHandle_t handle, ConvOp op,
                              const ConvDescriptorView& d) {
  return VisitPass(op, [&](auto pass) {
    using P = decltype(pass);
    return Ranking<P>(
        [&](int requested, int* returned, typename P::Perf* perf) {
          return P::GetV7(handle, d, requested, returned, perf);
        },
        P::kGetV7.name);
  });
}

absl::StatusOr<int64_t> AlgoWorkspaceSize(cudnnHandle_t handle, ConvOp op,
                                          const ConvDescriptorView& d,
                                          int algo) {
  return VisitPass(op, [&](auto pass) -> absl::StatusOr<int64_t> {
    using P = decltype(pass);
    size_t bytes = 0;
    RETURN_IF_ERROR(CudnnStatusToAbsl(
        P::Workspace(handle, d, static_cast<typename P::Algo>(algo), &bytes),
        P::kWorkspace.name));
    return static_cast<int64_t>(bytes);
  });
}

absl::Status RunAlgo(cudnnHandle_t handle, ConvOp op, DataType data_type,
                     const ConvDescriptorView& d, const ConvBuffers& b,
                     int algo, void* workspace, size_t workspace_bytes) {
  const float alpha_f = 1.0f, beta_f = 0.0f;
  const double alpha_d = 1.0, beta_d = 0.0;
  const bool dbl = DataTypeTraitsOf(data_type).double_scaling;
  const void* alpha = dbl ? static_cast<const void*>(&alpha_d) : &alpha_f;
  const void* beta = dbl ? static_cast<const void*>(&beta_d) : &beta_f;
  return VisitPass(op, [&](auto pass) {
    using P = decltype(pass);
    return CudnnStatusToAbsl(
        P::Run(handle, alpha, d, b, static_cast<typename P::Algo>(algo),
               workspace, workspace_bytes, beta),
        P::kRun.name);
  });
}

}  // namespace tunedb
