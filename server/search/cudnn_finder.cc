#include "server/search/cudnn_finder.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/record_results.h"
#include "common/status_macros.h"
#include "cudnn/cudnn_conv.h"
#include "cudnn/cudnn_device.h"
#include "cudnn/cudnn_status.h"
#include "server/search/algo_failure.h"
#include "server/search/candidates.h"
#include "server/search/conv_launcher.h"
#include "server/search/graph_search.h"
#include "server/search/retime.h"
#include "server/search/sampler.h"
#include "server/search/screen.h"
#include "server/search/search_budget.h"
#include "server/search/verify.h"
#include "server/search/workspace_offer.h"

namespace tunedb {
namespace {

// How a search's candidates run: for the graph API, its graph and the
// launcher of its plans.
struct Launch {
  std::optional<ConvOpGraph> graph;
  std::unique_ptr<ConvLauncher> launcher;
  GraphLauncher* graph_launcher = nullptr;  // `launcher`, graph API only
};

// Phase 1 for the graph API: its candidates into out.results and how they
// run into `launch`; false (out.results the stored negative answer) where
// cuDNN builds no graph for the problem.
absl::StatusOr<bool> FindGraphCandidates(
    const ConvProblem& problem, const CudnnConv& conv, cudnnHandle_t handle,
    cudaStream_t stream, const DeviceSpan& workspace,
    const CudnnFinderOptions& options, const SearchOptions& search,
    Launch& launch, SearchResult& out) {
  absl::StatusOr<ConvOpGraph> g = ConvOpGraph::Create(problem, handle);
  if (!g.ok()) {
    RETURN_IF_ERROR(CheckStickyError());
    if (!absl::IsFailedPrecondition(g.status()) &&
        !absl::IsInvalidArgument(g.status())) {
      return g.status();
    }
    // cuDNN builds no graph for it: a stored negative answer.
    AlgoResult none;
    none.status = AlgoStatus::kNotSupported;
    none.error = std::string(g.status().message());
    out.results = {none};
    return false;
  }
  launch.graph.emplace(*std::move(g));
  auto gl = std::make_unique<GraphLauncher>(handle, stream, conv.buffers());
  launch.graph_launcher = gl.get();
  launch.launcher = std::move(gl);
  ASSIGN_OR_RETURN(out.results,
                   GraphCandidates(*launch.graph, *launch.graph_launcher,
                                   stream, workspace, options, search,
                                   &out.phases));
  return true;
}

}  // namespace

CudnnFinder::CudnnFinder(const Options& options, DeviceInfo info,
                         CudnnHandle handle, CudaStream stream,
                         std::unique_ptr<GpuClocks> clocks)
    : options_(options),
      info_(std::move(info)),
      handle_(std::move(handle)),
      stream_(std::move(stream)),
      clocks_(std::move(clocks)),
      values_(options.seed) {}

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
      options, std::move(info), std::move(handle), std::move(stream),
      GpuClocks::ForCudaDevice(options.ordinal)));
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
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(
      CudaStatusToAbsl(cudaSetDevice(options_.ordinal), "cudaSetDevice"));
  int64_t cap = options.workspace_cap_bytes;
  if (cap < 0) {
    size_t free_bytes = 0, total_bytes = 0;
    RETURN_IF_ERROR(CudaStatusToAbsl(cudaMemGetInfo(&free_bytes, &total_bytes),
                                     "cudaMemGetInfo"));
    cap = DefaultWorkspaceCap(static_cast<int64_t>(free_bytes), problem.api);
  }
  const absl::Time start = absl::Now();
  while (true) {
    int64_t offered = 0;
    absl::StatusOr<SearchResult> result =
        SearchWithCap(problem, cap, options.timeout - (absl::Now() - start),
                      options, &offered);
    last_busy_ = absl::Now();
    if (static_cast<int64_t>(workspace_.bytes()) > kMaxKeptWorkspace) {
      workspace_ = DeviceBuffer();
    }
    if (result.ok() || !absl::IsResourceExhausted(result.status()) ||
        cap == 0) {
      if (!result.ok()) RETURN_IF_ERROR(CheckStickyError());
      return result;
    }
    // Out of device memory: give back the kept memory, offer less workspace
    // (a quarter of what was offered, which can be less than the cap) and
    // search again.
    workspace_ = DeviceBuffer();
    operands_.Release();
    values_ = DeviceValues(options_.seed);
    if (offered > 0) cap = std::min(cap, offered);
    cap = cap >= (int64_t{64} << 20) ? cap / 4 : 0;
  }
}

absl::StatusOr<void*> CudnnFinder::Workspace(int64_t cap) {
  if (static_cast<int64_t>(workspace_.bytes()) < cap) {
    workspace_ = DeviceBuffer();  // its memory may be needed for the new one
    ASSIGN_OR_RETURN(workspace_,
                     DeviceBuffer::Allocate(static_cast<size_t>(cap)));
  }
  return workspace_.get();
}

bool CudnnFinder::ClockedDown() const {
  if (std::optional<double> f = clocks_->SmClockFraction()) {
    return *f < options_.warm_clock_fraction;
  }
  return absl::Now() - last_busy_ >= options_.idle_before_warmup;
}

absl::Status CudnnFinder::WarmUpIfClockedDown(void* workspace, size_t bytes) {
  // Memory traffic keeps the GPU busy without depending on which cuDNN
  // algorithms the problem supports; 64 MiB a pass at most.
  const size_t chunk = std::min<size_t>(bytes, size_t{64} << 20);
  if (chunk == 0 || !ClockedDown()) return absl::OkStatus();
  const bool by_clock = clocks_->Known();
  const absl::Time end = absl::Now() + options_.warmup;
  while (absl::Now() < end && (!by_clock || ClockedDown())) {
    for (int i = 0; i < 8; ++i) {
      RETURN_IF_ERROR(
          CudaStatusToAbsl(cudaMemsetAsync(workspace, i, chunk, stream_.get()),
                           "cudaMemsetAsync(warm-up)"));
    }
    RETURN_IF_ERROR(CudaStatusToAbsl(cudaStreamSynchronize(stream_.get()),
                                     "cudaStreamSynchronize(warm-up)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<SearchResult> CudnnFinder::SearchWithCap(
    const ConvProblem& problem, int64_t cap, absl::Duration timeout,
    const SearchOptions& search, int64_t* offered_out) {
  *offered_out = 0;
  SearchResult out;
  absl::Time mark = absl::Now();
  // Milliseconds since the last call (the first: since `mark` above).
  auto lap = [&mark] {
    const absl::Time now = absl::Now();
    const double ms = absl::ToDoubleMilliseconds(now - mark);
    mark = now;
    return ms;
  };
  ASSIGN_OR_RETURN(std::unique_ptr<CudnnConv> conv,
                   CudnnConv::Create(problem, handle_.get(), stream_.get(),
                                     values_, &operands_));
  // The graph API's plans say what they need only once built: its searches
  // offer the cap.
  const int64_t offered =
      problem.api == ConvApi::kGraph ? cap : LegacyWorkspaceOffer(*conv, cap);
  out.workspace_cap_bytes = offered;
  *offered_out = offered;
  ASSIGN_OR_RETURN(void* ws, Workspace(offered));
  const DeviceSpan workspace{ws, static_cast<size_t>(offered)};
  RETURN_IF_ERROR(WarmUpIfClockedDown(workspace.ptr, workspace.bytes));
  out.phases.setup_ms = lap();

  // The API's candidates and how they run; the rest is shared.
  Launch launch;
  if (problem.api == ConvApi::kGraph) {
    ASSIGN_OR_RETURN(const bool built,
                     FindGraphCandidates(problem, *conv, handle_.get(),
                                         stream_.get(), workspace, options_,
                                         search, launch, out));
    if (!built) {
      out.phases.find_ms = lap();
      return out;
    }
  } else {
    launch.launcher = std::make_unique<LegacyLauncher>(*conv);
    ASSIGN_OR_RETURN(
        out.results,
        search.retime_only.empty()
            ? FindCandidates(*conv, workspace)
            : ListedCandidates(*conv, stream_.get(), workspace, search));
  }
  out.phases.find_ms = lap();

  ASSIGN_OR_RETURN(std::unique_ptr<Sampler> sampler,
                   Sampler::Create(launch.launcher.get(), stream_.get(),
                                   workspace.ptr,
                                   workspace.bytes));
  // Screening, re-timing and verification share one budget: a share of what
  // Find cost (for the graph API: of building and first running the
  // candidates).
  const SearchBudget budget(options_,
                            out.phases.find_ms - out.phases.heuristics_ms,
                            timeout, out.results);
  RETURN_IF_ERROR(Screen(*sampler, options_, budget, out.results));
  out.phases.screen_ms = lap();
  ASSIGN_OR_RETURN(out.repeats,
                   Retime(*sampler, options_, budget, out.results));
  SortResults(out.results);
  out.phases.retime_ms = lap();

  ASSIGN_OR_RETURN(
      out.verified,
      Verify(*conv, *launch.launcher, workspace, options_.verify_max_elements,
             options_.cpu_reference_max_macs, out.results));
  if (launch.graph_launcher != nullptr) {
    RETURN_IF_ERROR(KeepPlans(*launch.graph_launcher, options_, out.results));
  }
  out.phases.verify_ms = lap();
  return out;
}

}  // namespace tunedb
