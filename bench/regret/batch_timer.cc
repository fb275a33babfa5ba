#include "bench/regret/batch_timer.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "cudnn/cudnn_status.h"

namespace tunedb::regret {
namespace {

// Sizing stops after this many batches even if the last was still short.
constexpr int kMaxSizingSteps = 8;

}  // namespace

absl::StatusOr<std::unique_ptr<BatchTimer>> BatchTimer::Create(
    CudnnConv* conv, cudaStream_t stream, int algo, MathType math,
    void* workspace, size_t workspace_bytes, const Options& options) {
  auto launcher = std::make_unique<LegacyLauncher>(*conv);
  AlgoResult r;
  r.algo = algo;
  r.math_type = math;
  ASSIGN_OR_RETURN(std::unique_ptr<BatchTimer> t,
                   Create(launcher.get(), r, stream, workspace,
                          workspace_bytes, options));
  t->owned_launcher_ = std::move(launcher);
  return t;
}

absl::StatusOr<std::unique_ptr<BatchTimer>> BatchTimer::Create(
    ConvLauncher* launcher, const AlgoResult& r, cudaStream_t stream,
    void* workspace, size_t workspace_bytes, const Options& options) {
  ASSIGN_OR_RETURN(CudaEvent start, CudaEvent::Create());
  ASSIGN_OR_RETURN(CudaEvent stop, CudaEvent::Create());
  std::unique_ptr<BatchTimer> t(
      new BatchTimer(std::move(start), std::move(stop)));
  t->launcher_ = launcher;
  t->result_ = r;
  t->result_.plan.clear();
  t->stream_ = stream;
  t->workspace_ = workspace;
  t->workspace_bytes_ = workspace_bytes;
  t->options_ = options;
  t->options_.max_batch = std::max(options.max_batch, 1);
  // Grow the batch until one lasts min_sample_ms (aiming a quarter above,
  // so that noise does not leave samples just short of it).
  RETURN_IF_ERROR(t->Prepare(1));
  for (int step = 0; step < kMaxSizingSteps; ++step) {
    ASSIGN_OR_RETURN(double batch_ms, t->TimeBatch());
    if (batch_ms >= options.min_sample_ms ||
        t->batch_ >= t->options_.max_batch) {
      break;
    }
    const double wanted = std::ceil(t->batch_ * 1.25 * options.min_sample_ms /
                                    std::max(batch_ms, 1e-4));
    const int next = static_cast<int>(
        std::clamp(std::max(wanted, t->batch_ + 1.0), 1.0,
                   static_cast<double>(t->options_.max_batch)));
    RETURN_IF_ERROR(t->Prepare(next));
  }
  return t;
}

BatchTimer::~BatchTimer() { DropGraph(); }

void BatchTimer::DropGraph() {
  if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
  exec_ = nullptr;
}

absl::Status BatchTimer::RunDirect(int count) {
  for (int i = 0; i < count; ++i) {
    RETURN_IF_ERROR(launcher_->Launch(result_, workspace_, workspace_bytes_));
  }
  return absl::OkStatus();
}

absl::Status BatchTimer::Prepare(int batch) {
  batch_ = batch;
  DropGraph();
  if (options_.mode != LaunchMode::kGraph || capture_refused_) {
    return absl::OkStatus();
  }
  // Settle the descriptor's math type and the handle's stream outside the
  // capture.
  RETURN_IF_ERROR(RunDirect(1));
  RETURN_IF_ERROR(CudaStatusToAbsl(cudaStreamSynchronize(stream_),
                                   "cudaStreamSynchronize"));
  if (cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed) !=
      cudaSuccess) {
    cudaGetLastError();
    capture_refused_ = true;
    return absl::OkStatus();
  }
  const absl::Status captured = RunDirect(batch_);
  cudaGraph_t graph = nullptr;
  const cudaError_t end = cudaStreamEndCapture(stream_, &graph);
  if (captured.ok() && end == cudaSuccess && graph != nullptr &&
      cudaGraphInstantiate(&exec_, graph, 0) != cudaSuccess) {
    exec_ = nullptr;  // instantiation failed: direct launches
  }
  if (graph != nullptr) cudaGraphDestroy(graph);
  cudaGetLastError();  // a refused capture leaves a non-sticky error
  if (exec_ != nullptr) {
    // One replay to check that it runs.
    const cudaError_t replay = cudaGraphLaunch(exec_, stream_);
    const cudaError_t done =
        replay == cudaSuccess ? cudaStreamSynchronize(stream_) : replay;
    if (done != cudaSuccess) {
      if (IsCudaStickyError(done)) {
        return CudaStatusToAbsl(done, "graph replay");
      }
      cudaGetLastError();
      DropGraph();
    }
  }
  if (exec_ == nullptr) capture_refused_ = true;
  return absl::OkStatus();
}

absl::StatusOr<double> BatchTimer::TimeBatch() {
  RETURN_IF_ERROR(CudaStatusToAbsl(cudaEventRecord(start_.get(), stream_),
                                   "cudaEventRecord"));
  if (exec_ != nullptr) {
    RETURN_IF_ERROR(
        CudaStatusToAbsl(cudaGraphLaunch(exec_, stream_), "cudaGraphLaunch"));
  } else {
    RETURN_IF_ERROR(RunDirect(batch_));
  }
  RETURN_IF_ERROR(CudaStatusToAbsl(cudaEventRecord(stop_.get(), stream_),
                                   "cudaEventRecord"));
  RETURN_IF_ERROR(CudaStatusToAbsl(cudaEventSynchronize(stop_.get()),
                                   "cudaEventSynchronize"));
  float ms = 0;
  RETURN_IF_ERROR(
      CudaStatusToAbsl(cudaEventElapsedTime(&ms, start_.get(), stop_.get()),
                       "cudaEventElapsedTime"));
  return static_cast<double>(ms);
}

absl::StatusOr<double> BatchTimer::Sample() {
  ASSIGN_OR_RETURN(double batch_ms, TimeBatch());
  return batch_ms / batch_;
}

}  // namespace tunedb::regret
