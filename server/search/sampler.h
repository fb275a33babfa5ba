// Sampler: the CandidateTimer on the GPU; runs and times the candidates of
// one search (screen.h, retime.h) through one ConvLauncher (legacy
// algorithms or graph-API plans), stream and workspace, with one pair of
// CUDA events: launch and host time from direct launches, GPU time from
// CUDA-graph replays. Each candidate (algorithm, math type and knobs) keeps
// one RunTimer, made with the batch length of its first graph sample.
//
// Thread safety: none; one search at a time. It must not outlive the conv or
// the workspace.
#ifndef TUNEDB_SERVER_SEARCH_SAMPLER_H_
#define TUNEDB_SERVER_SEARCH_SAMPLER_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "cudnn/cudnn_conv.h"
#include "cudnn/cudnn_handles.h"
#include "server/search/candidate_timer.h"
#include "server/search/conv_launcher.h"
#include "server/search/run_timer.h"
#include "tunedb/record.h"

namespace tunedb {

class Sampler final : public CandidateTimer {
 public:
  // `launcher` must outlive the sampler.
  static absl::StatusOr<std::unique_ptr<Sampler>> Create(
      ConvLauncher* launcher, cudaStream_t stream, void* workspace,
      size_t workspace_bytes);

  cudaStream_t stream() const { return stream_; }
  // One run of r's algorithm and math type (asynchronously). Every run is
  // offered the workspace r needs (r.workspace_bytes, at most the search's),
  // as a caller given tunedb's answer offers it: some algorithms behave
  // differently with more.
  absl::Status Run(const AlgoResult& r);
  // `batch` runs launched directly between the events: launch and host time
  // per run.
  absl::StatusOr<DirectSample> TimeDirect(const AlgoResult& r, int batch,
                                          DirectStart from) override;
  // One sample of GPU time through r's RunTimer (made with `batch` on first
  // use), ms per run.
  absl::StatusOr<double> Sample(const AlgoResult& r, int batch) override;
  std::optional<CandidateKey> LastRun() const override { return last_; }

 private:
  Sampler(ConvLauncher* launcher, cudaStream_t stream, void* workspace,
          size_t workspace_bytes, CudaEvent start, CudaEvent stop);
  size_t WorkspaceFor(const AlgoResult& r) const;

  ConvLauncher* launcher_;
  cudaStream_t stream_;
  void* workspace_;
  size_t workspace_bytes_;
  CudaEvent start_, stop_;
  std::map<CandidateKey, std::unique_ptr<RunTimer>> timers_;
  std::optional<CandidateKey> last_;
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SEARCH_SAMPLER_H_
