// CudnnFinder: measures cuDNN convolution algorithms on one GPU, in process.
//
// It is what a tunedb-worker process runs (one per GPU and cuDNN version);
// the daemon itself talks to it only through WorkerFinder. A search:
//   1. builds descriptors and random device buffers for the problem
//      (CudnnConv) and offers a workspace of up to the cap (default
//      min(free memory / 4, 4 GiB); halved again and again when the device
//      runs out of memory);
//   2. runs cudnnFind*AlgorithmEx once per math type the problem's policy
//      allows (SearchMathTypes) and keeps results per (algo, math type);
//      algorithms needing more workspace than the cap are kFailed with their
//      need, "not supported" ones kNotSupported;
//   3. screens every OK result (one untimed run, since CUDA loads kernels
//      lazily and Find's single sample may include that, then the best of
//      two timed samples), then re-times the leading candidates (within
//      15 % of the best, at least the best two, at most six) with CUDA
//      events after a warm-up, interleaving them round by round, until each
//      has ten samples and the leader has held for five rounds, or fifty
//      rounds, or the time budget. A sample is a batch of back-to-back runs
//      of about 0.5 ms, divided by its length. A result outside the pool
//      that is within the margin of the re-timed leader joins the pool and
//      the rounds go on. Stores median, spread (max - min), samples and
//      retimed = true (screened-only results have samples = 1);
//   4. verifies: runs the fastest and a reference algorithm (implicit GEMM
//      with FMA math first; a double-precision CPU computation when no other
//      algorithm runs and the problem is small) on the same inputs and
//      compares the outputs' relative L2 difference against a tolerance for
//      the type. A fastest algorithm that mismatches is marked kFailed and
//      the next is checked.
//
// Thread safety: thread-safe; searches run one at a time (a mutex).
#ifndef TUNEDB_SERVER_SEARCH_CUDNN_FINDER_H_
#define TUNEDB_SERVER_SEARCH_CUDNN_FINDER_H_

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cudnn/cudnn_handles.h"
#include "server/finder/finder.h"

namespace tunedb {

class CudnnFinder final : public Finder {
 public:
  struct Options {
    int ordinal = 0;                 // CUDA device ordinal
    double retime_margin = 0.15;     // candidates within this of the best
    int min_candidates = 2;
    int max_candidates = 6;
    int min_rounds = 10;
    int max_rounds = 50;
    int stable_rounds = 5;           // leader unchanged this many rounds
    absl::Duration warmup = absl::Milliseconds(50);
    // A timed sample is a batch of back-to-back runs lasting about this long
    // (at most max_batch runs), so short kernels are timed without launch
    // gaps and event overhead.
    double sample_ms = 0.5;
    int max_batch = 64;
    // Re-timing budget: min(this, search timeout / 4).
    absl::Duration retime_budget = absl::Seconds(3);
    uint64_t seed = 20260101;        // input data seed
    // Verification falls back to a CPU computation when no other algorithm
    // runs, for problems of at most this many multiply-accumulates.
    int64_t cpu_reference_max_macs = int64_t{1} << 29;
  };

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
              CudaStream stream);
  absl::StatusOr<SearchResult> SearchWithCap(const ConvProblem& problem,
                                             int64_t cap,
                                             absl::Duration timeout);

  const Options options_;
  const DeviceInfo info_;
  std::mutex mu_;
  CudnnHandle handle_;
  CudaStream stream_;
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SEARCH_CUDNN_FINDER_H_
