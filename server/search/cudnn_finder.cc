#include "server/search/cudnn_finder.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "cudnn/cudnn_conv.h"
#include "cudnn/cudnn_device.h"
#include "cudnn/cudnn_status.h"
#include "server/search/algo_failure.h"
#include "server/search/candidates.h"
#include "server/search/retime.h"
#include "server/search/sampler.h"
#include "server/search/screen.h"
#include "server/search/verify.h"

namespace tunedb {
namespace {

constexpr int64_t kMaxDefaultWorkspace = int64_t{4} << 30;

}  // namespace

CudnnFinder::CudnnFinder(const Options& options, DeviceInfo info,
                         CudnnHandle handle, CudaStream stream)
    : options_(options),
      info_(std::move(info)),
      handle_(std::move(handle)),
      stream_(std::move(stream)) {}

absl::StatusOr<std::unique_ptr<CudnnFinder>> CudnnFinder::Create(
    const Options& options) {
  ASSIGN_OR_RETURN(int count, CudaDeviceCount());
  if (options.ordinal < 0 || options.ordinal >= count) {
    return absl::InvalidArgumentError(
        absl::StrCat("CUDA device ordinal ", options.ordinal, " out of range (",
                     count, " devices)"));
  }
  RETURN_IF_ERROR(
      CudaStatusToAbsl(cudaSetDevice(options.ordinal), "cudaSetDevice"));
  ASSIGN_OR_RETURN(DeviceInfo info, QueryCudaDevice(options.ordinal));
  ASSIGN_OR_RETURN(CudnnHandle handle, CreateCudnnHandle());
  ASSIGN_OR_RETURN(CudaStream stream, CudaStream::Create());
  return std::unique_ptr<CudnnFinder>(new CudnnFinder(
      options, std::move(info), std::move(handle), std::move(stream)));
}

absl::StatusOr<std::vector<DeviceInfo>> CudnnFinder::Devices() {
  return std::vector<DeviceInfo>{info_};
}

absl::StatusOr<SearchResult> CudnnFinder::Search(int device_index,
                                                 const ConvProblem& problem,
                                                 const SearchOptions& options) {
  if (device_index != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "device index ", device_index, " out of range (1 device)"));
  }
  RETURN_IF_ERROR(problem.Validate());
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(
      CudaStatusToAbsl(cudaSetDevice(options_.ordinal), "cudaSetDevice"));
  int64_t cap = options.workspace_cap_bytes;
  if (cap < 0) {
    size_t free_bytes = 0, total_bytes = 0;
    RETURN_IF_ERROR(CudaStatusToAbsl(cudaMemGetInfo(&free_bytes, &total_bytes),
                                     "cudaMemGetInfo"));
    cap = std::min<int64_t>(static_cast<int64_t>(free_bytes / 4),
                            kMaxDefaultWorkspace);
  }
  const absl::Time start = absl::Now();
  while (true) {
    absl::StatusOr<SearchResult> result =
        SearchWithCap(problem, cap, options.timeout - (absl::Now() - start));
    if (result.ok() || !absl::IsResourceExhausted(result.status()) ||
        cap == 0) {
      if (!result.ok()) RETURN_IF_ERROR(CheckStickyError());
      return result;
    }
    // Out of device memory: offer less workspace and search again.
    cap = cap >= (int64_t{64} << 20) ? cap / 4 : 0;
  }
}

absl::StatusOr<SearchResult> CudnnFinder::SearchWithCap(
    const ConvProblem& problem, int64_t cap, absl::Duration timeout) {
  ASSIGN_OR_RETURN(
      std::unique_ptr<CudnnConv> conv,
      CudnnConv::Create(problem, handle_.get(), stream_.get(), options_.seed));
  ASSIGN_OR_RETURN(DeviceBuffer workspace,
                   DeviceBuffer::Allocate(static_cast<size_t>(cap)));
  SearchResult out;
  out.workspace_cap_bytes = cap;
  ASSIGN_OR_RETURN(out.results, FindCandidates(*conv, workspace));

  ASSIGN_OR_RETURN(std::unique_ptr<Sampler> sampler,
                   Sampler::Create(conv.get(), stream_.get(), workspace.get(),
                                   workspace.bytes()));
  // Screening and re-timing share one budget.
  const absl::Time deadline =
      absl::Now() + std::min(options_.retime_budget, timeout / 4);
  RETURN_IF_ERROR(Screen(*sampler, options_, deadline, out.results));
  ASSIGN_OR_RETURN(out.repeats,
                   Retime(*sampler, options_, deadline, out.results));
  SortResults(out.results);

  ASSIGN_OR_RETURN(
      out.verified,
      Verify(*conv, workspace, options_.cpu_reference_max_macs, out.results));
  return out;
}

}  // namespace tunedb
