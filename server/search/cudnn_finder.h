// CudnnFinder: measures cuDNN convolution algorithms on one GPU, in process.
//
// It is what a tunedb-worker process runs (one per GPU and cuDNN version);
// the daemon itself talks to it only through WorkerSupervisor. What a search
// does after its own Find calls costs at most the options'
// search_budget_factor times what those calls cost (search_budget.h, with
// its floors), and it runs these phases:
//   0. set-up: descriptors and buffers for the problem (CudnnConv, filled
//      from values kept on the device, device_values.h), a workspace
//      (workspace_offer.h: the offer, the default cap and what is kept; the
//      offer quartered again and again when the device runs out of memory),
//      and, while the GPU is clocked down, a warm-up so its clocks are up;
//   1. candidates.h: cudnnFind*AlgorithmEx once per math type the policy
//      allows, results per (algo, math type); Find's one timed call is a
//      first launch-time sample, and the wall time of these calls sets the
//      budget of phases 2 to 4 (search_budget.h);
//   2. screen.h: the OK results near Find's best timed again with one batch
//      of direct launches each (launch and host time);
//   3. retime.h: the leaders by launch time re-timed together, interleaved,
//      each round one batch of direct launches (launch and host time), every
//      other round a CUDA-graph replay (GPU time), until the leader is
//      settled or the budget is spent (a clear leader alone, one round);
//   4. verify.h: the fastest checked against reference algorithms (or the
//      CPU) on the same inputs; a mismatch is marked kFailed and the next is
//      checked.
// SearchResult::phases says where the time went.
//
// Thread safety: thread-safe; searches run one at a time (a mutex).
#ifndef TUNEDB_SERVER_SEARCH_CUDNN_FINDER_H_
#define TUNEDB_SERVER_SEARCH_CUDNN_FINDER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cudnn/cudnn_handles.h"
#include "cudnn/device_values.h"
#include "cudnn/gpu_clocks.h"
#include "cudnn/operand_arena.h"
#include "server/finder/finder.h"
#include "server/search/cudnn_finder_options.h"

namespace tunedb {

class CudnnFinder final : public Finder {
 public:
  using Options = CudnnFinderOptions;

  // Selects the device, creates the cuDNN handle and a stream. UNAVAILABLE if
  // there is no usable device.
  static absl::StatusOr<std::unique_ptr<CudnnFinder>> Create(
      const Options& options);

  std::string Name() const override { return "cudnn"; }
  // One device: the one at options.ordinal.
  absl::StatusOr<std::vector<DeviceInfo>> Devices() override;
  // device_index must be 0. UNAVAILABLE with IsFatalDeviceError() set means
  // the CUDA context is broken and the process must exit.
  absl::StatusOr<SearchResult> Search(int device_index,
                                      const ConvProblem& problem,
                                      const SearchOptions& options) override;

 private:
  CudnnFinder(const Options& options, DeviceInfo info, CudnnHandle handle,
              CudaStream stream, std::unique_ptr<GpuClocks> clocks);
  // One search offering at most `cap` bytes of workspace; sets
  // `*offered_out` to what it offered (or 0) even when it fails.
  absl::StatusOr<SearchResult> SearchWithCap(
      const ConvProblem& problem, int64_t cap, absl::Duration timeout,
      const SearchOptions& search, int64_t* offered_out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The kept workspace, grown to `cap` bytes if smaller.
  absl::StatusOr<void*> Workspace(int64_t cap)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Keeps the GPU busy while it is clocked down (options_.warmup at most;
  // see CudnnFinderOptions).
  absl::Status WarmUpIfClockedDown(void* workspace, size_t bytes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ClockedDown() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  const DeviceInfo info_;
  // One search at a time: the device's handle, stream and buffers below.
  absl::Mutex mu_;
  CudnnHandle handle_ ABSL_GUARDED_BY(mu_);
  CudaStream stream_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<GpuClocks> clocks_ ABSL_GUARDED_BY(mu_);  // never null
  // Input data, kept between searches.
  DeviceValues values_ ABSL_GUARDED_BY(mu_);
  // Kept between searches, grown on demand.
  DeviceBuffer workspace_ ABSL_GUARDED_BY(mu_);
  // The conv's buffers, likewise.
  OperandArena operands_ ABSL_GUARDED_BY(mu_);
  // End of the last search.
  absl::Time last_busy_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SEARCH_CUDNN_FINDER_H_
