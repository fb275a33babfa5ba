#include "server/search/sampler.h"

#include <algorithm>
#include <cstdint>

#include "common/status_macros.h"
#include "cudnn/cudnn_status.h"

namespace tunedb {

absl::StatusOr<std::unique_ptr<Sampler>> Sampler::Create(
    ConvLauncher* launcher, cudaStream_t stream, void* workspace,
    size_t workspace_bytes) {
  ASSIGN_OR_RETURN(CudaEvent start, CudaEvent::Create());
  ASSIGN_OR_RETURN(CudaEvent stop, CudaEvent::Create());
  return std::unique_ptr<Sampler>(new Sampler(launcher, stream, workspace,
                                              workspace_bytes, std::move(start),
                                              std::move(stop)));
}

Sampler::Sampler(ConvLauncher* launcher, cudaStream_t stream, void* workspace,
                 size_t workspace_bytes, CudaEvent start, CudaEvent stop)
    : launcher_(launcher),
      stream_(stream),
      workspace_(workspace),
      workspace_bytes_(workspace_bytes),
      start_(std::move(start)),
      stop_(std::move(stop)) {}

size_t Sampler::WorkspaceFor(const AlgoResult& r) const {
  return std::min(static_cast<size_t>(std::max<int64_t>(r.workspace_bytes, 0)),
                  workspace_bytes_);
}

absl::Status Sampler::Run(const AlgoResult& r) {
  last_ = CandidateKeyOf(r);
  return launcher_->Launch(r, workspace_, WorkspaceFor(r));
}

absl::StatusOr<DirectSample> Sampler::TimeDirect(const AlgoResult& r, int batch,
                                                 DirectStart from) {
  last_ = CandidateKeyOf(r);
  return TimeDirectRuns(*launcher_, r, stream_, workspace_, WorkspaceFor(r),
                        batch, start_.get(), stop_.get(), from);
}

absl::StatusOr<double> Sampler::Sample(const AlgoResult& r, int batch) {
  last_ = CandidateKeyOf(r);
  std::unique_ptr<RunTimer>& t = timers_[CandidateKeyOf(r)];
  if (t == nullptr) {
    ASSIGN_OR_RETURN(t, RunTimer::Create(launcher_, r, stream_, workspace_,
                                         WorkspaceFor(r), batch));
  }
  return t->Sample(start_.get(), stop_.get());
}

}  // namespace tunedb
