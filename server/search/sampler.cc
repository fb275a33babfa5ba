#include "server/search/sampler.h"

#include "common/status_macros.h"

namespace tunedb {

absl::StatusOr<std::unique_ptr<Sampler>> Sampler::Create(
    CudnnConv* conv, cudaStream_t stream, void* workspace,
    size_t workspace_bytes) {
  ASSIGN_OR_RETURN(CudaEvent start, CudaEvent::Create());
  ASSIGN_OR_RETURN(CudaEvent stop, CudaEvent::Create());
  return std::unique_ptr<Sampler>(new Sampler(conv, stream, workspace,
                                              workspace_bytes, std::move(start),
                                              std::move(stop)));
}

Sampler::Sampler(CudnnConv* conv, cudaStream_t stream, void* workspace,
                 size_t workspace_bytes, CudaEvent start, CudaEvent stop)
    : conv_(conv),
      stream_(stream),
      workspace_(workspace),
      workspace_bytes_(workspace_bytes),
      start_(std::move(start)),
      stop_(std::move(stop)) {}

absl::Status Sampler::Run(const AlgoResult& r) {
  return conv_->Run(r.algo, r.math_type, workspace_, workspace_bytes_);
}

absl::StatusOr<DirectSample> Sampler::TimeDirect(const AlgoResult& r,
                                                 int batch) {
  return TimeDirectRuns(*conv_, stream_, r.algo, r.math_type, workspace_,
                        workspace_bytes_, batch, start_.get(), stop_.get());
}

absl::StatusOr<double> Sampler::Sample(const AlgoResult& r, int batch) {
  std::unique_ptr<RunTimer>& t = timers_[{r.algo, r.math_type}];
  if (t == nullptr) {
    ASSIGN_OR_RETURN(t, RunTimer::Create(conv_, stream_, r.algo, r.math_type,
                                         workspace_, workspace_bytes_, batch));
  }
  return t->Sample(start_.get(), stop_.get());
}

bool Sampler::Graphed(const AlgoResult& r) const {
  auto it = timers_.find({r.algo, r.math_type});
  return it != timers_.end() && it->second != nullptr && it->second->graphed();
}

}  // namespace tunedb
