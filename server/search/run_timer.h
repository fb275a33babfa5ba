// How the search times an algorithm (the GPU benchmark times the same way):
// a sample is a batch of back-to-back runs of one candidate (an algorithm and
// math type of a CudnnConv, or a graph-API plan: ConvLauncher) between two CUDA
// events, divided by the batch length.
//
// RunTimer captures the batch once into a CUDA graph and replays it, so the
// host-side cost of the cuDNN call stays out of the GPU time; when capture is
// not possible the runs are launched directly and graphed() is false.
// TimeDirectRuns() launches a batch directly and measures what such a caller
// waits for (launch time) and the host's share of it.
//
// Thread safety: none; a timer uses the conv's stream and must not outlive
// the conv or the workspace.
#ifndef TUNEDB_SERVER_SEARCH_RUN_TIMER_H_
#define TUNEDB_SERVER_SEARCH_RUN_TIMER_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cudnn/cudnn_conv.h"
#include "server/search/conv_launcher.h"
#include "tunedb/record.h"

namespace tunedb {

// The batch length that makes a sample last about `sample_ms` for a run of
// `run_ms`: between 1 and `max_batch`.
int SampleBatch(double run_ms, double sample_ms, int max_batch);

// One sample of direct launches, per run.
struct DirectSample {
  // Between the two events: what a caller launching back to back waits for,
  // host cost included (the GPU idles while the host prepares a call).
  double launch_ms = 0;
  // Host wall time spent issuing the runs.
  double host_ms = 0;
};

// Where a direct sample's timed batch starts. The first call after another
// candidate's can cost the host more than the calls after it (docs/gpu.md).
enum class DirectStart {
  // After one untimed run: the steady cost of back-to-back calls.
  kAfterUntimedRun,
  // At the switch: the batch's first call is the first after whatever ran
  // before, as in a program whose calls alternate between convolutions.
  kAtSwitch,
};

// "untimed-run" or "switch".
absl::string_view DirectStartName(DirectStart from);

// `batch` runs launched directly between two events, from an idle GPU (so
// the first timed call's host cost counts, as it does for a caller whose GPU
// waits for it), starting as `from` says.
absl::StatusOr<DirectSample> TimeDirectRuns(
    ConvLauncher& launcher, const AlgoResult& r, cudaStream_t stream,
    void* workspace, size_t workspace_bytes, int batch, cudaEvent_t start,
    cudaEvent_t stop, DirectStart from = DirectStart::kAfterUntimedRun);
// The same for a legacy algorithm and math type of `conv`.
absl::StatusOr<DirectSample> TimeDirectRuns(
    CudnnConv& conv, cudaStream_t stream, int algo, MathType math,
    void* workspace, size_t workspace_bytes, int batch, cudaEvent_t start,
    cudaEvent_t stop, DirectStart from = DirectStart::kAfterUntimedRun);

class RunTimer {
 public:
  // Times `r` through `launcher` (which must outlive the timer).
  static absl::StatusOr<std::unique_ptr<RunTimer>> Create(
      ConvLauncher* launcher, const AlgoResult& r, cudaStream_t stream,
      void* workspace, size_t workspace_bytes, int batch);
  // Times a legacy algorithm and math type of `conv`.
  static absl::StatusOr<std::unique_ptr<RunTimer>> Create(
      CudnnConv* conv, cudaStream_t stream, int algo, MathType math,
      void* workspace, size_t workspace_bytes, int batch);
  ~RunTimer();
  RunTimer(const RunTimer&) = delete;
  RunTimer& operator=(const RunTimer&) = delete;

  // One sample, in milliseconds per run.
  absl::StatusOr<double> Sample(cudaEvent_t start, cudaEvent_t stop);
  bool graphed() const { return exec_ != nullptr; }
  int batch() const { return batch_; }

 private:
  RunTimer() = default;
  absl::Status Launch();

  ConvLauncher* launcher_ = nullptr;
  std::unique_ptr<LegacyLauncher> owned_launcher_;  // for the legacy Create
  AlgoResult result_;
  cudaStream_t stream_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  int batch_ = 1;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SEARCH_RUN_TIMER_H_
