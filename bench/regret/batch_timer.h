// BatchTimer: the regret run's own timing of one candidate (an algorithm and
// math type of a CudnnConv, or a graph-API plan, through a ConvLauncher), independent of the finder's (server/search/run_timer.h), so the
// truth does not inherit the finder's choices.
//
// A sample is one batch of back-to-back runs between two CUDA events,
// divided by the batch length. The batch is sized at creation so that it
// lasts at least `min_sample_ms`. Two launch modes (tunedb::LaunchMode):
//   - kDirect: every run is a cuDNN call from the host, as in a program that
//     calls cuDNN's legacy API; when a call costs the host more than the GPU
//     takes to run it, the GPU waits and the wait is in the time (launch-
//     inclusive time).
//   - kGraph: the batch is captured once into a CUDA graph and replayed (GPU
//     time, for callers that capture graphs); when capture is refused the
//     runs are launched directly and graphed() is false.
//
// Thread safety: none; it uses the conv's stream and must not outlive the
// conv or the workspace.
#ifndef TUNEDB_BENCH_REGRET_BATCH_TIMER_H_
#define TUNEDB_BENCH_REGRET_BATCH_TIMER_H_

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cudnn/cudnn_conv.h"
#include "cudnn/cudnn_handles.h"
#include "server/search/conv_launcher.h"
#include "tunedb/record.h"

namespace tunedb::regret {

class BatchTimer {
 public:
  struct Options {
    LaunchMode mode = LaunchMode::kDirect;
    double min_sample_ms = 1.0;
    int max_batch = 10000;
  };

  // Sizes the batch (and captures the graph): errors are those of a run.
  static absl::StatusOr<std::unique_ptr<BatchTimer>> Create(
      CudnnConv* conv, cudaStream_t stream, int algo, MathType math,
      void* workspace, size_t workspace_bytes, const Options& options);
  // The same for any candidate `r` run through `launcher` (a graph-API
  // plan, say), which must outlive the timer.
  static absl::StatusOr<std::unique_ptr<BatchTimer>> Create(
      ConvLauncher* launcher, const AlgoResult& r, cudaStream_t stream,
      void* workspace, size_t workspace_bytes, const Options& options);
  ~BatchTimer();
  BatchTimer(const BatchTimer&) = delete;
  BatchTimer& operator=(const BatchTimer&) = delete;

  // One sample: milliseconds per run.
  absl::StatusOr<double> Sample();
  int batch() const { return batch_; }
  // Sets the batch length (runs per sample): two candidates compared side
  // by side sample equally long batches.
  absl::Status SetBatch(int batch) { return Prepare(std::max(batch, 1)); }
  bool graphed() const { return exec_ != nullptr; }

 private:
  BatchTimer(CudaEvent start, CudaEvent stop)
      : start_(std::move(start)), stop_(std::move(stop)) {}
  // Sets the batch length; in graph mode (re)captures it.
  absl::Status Prepare(int batch);
  absl::Status RunDirect(int count);
  // One batch between the events; milliseconds for the whole batch.
  absl::StatusOr<double> TimeBatch();
  void DropGraph();

  ConvLauncher* launcher_ = nullptr;
  std::unique_ptr<LegacyLauncher> owned_launcher_;  // the legacy Create's
  AlgoResult result_;
  cudaStream_t stream_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  Options options_;
  int batch_ = 1;
  bool capture_refused_ = false;
  cudaGraphExec_t exec_ = nullptr;
  CudaEvent start_, stop_;
};

}  // namespace tunedb::regret

#endif  // TUNEDB_BENCH_REGRET_BATCH_TIMER_H_
