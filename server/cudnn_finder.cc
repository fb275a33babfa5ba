#include "server/cudnn_finder.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/cudnn_conv.h"
#include "server/cudnn_device.h"
#include "server/cudnn_status.h"
#include "status_macros.h"

namespace tunedb {
namespace {

constexpr int64_t kMaxDefaultWorkspace = int64_t{4} << 30;

using Clock = std::chrono::steady_clock;

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Returns the fatal UNAVAILABLE error if the CUDA context is broken.
absl::Status CheckSticky() {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (IsCudaStickyError(err)) return CudaStatusToAbsl(err, "CUDA context");
  return absl::OkStatus();
}

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
    return absl::InvalidArgumentError(absl::StrCat(
        "CUDA device ordinal ", options.ordinal, " out of range (", count,
        " devices)"));
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
    return absl::InvalidArgumentError(
        absl::StrCat("device index ", device_index, " out of range (1 device)"));
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
      if (!result.ok()) RETURN_IF_ERROR(CheckSticky());
      return result;
    }
    // Out of device memory: offer less workspace and search again.
    cap = cap >= (int64_t{64} << 20) ? cap / 4 : 0;
  }
}

absl::StatusOr<SearchResult> CudnnFinder::SearchWithCap(
    const ConvProblem& problem, int64_t cap, absl::Duration timeout) {
  ASSIGN_OR_RETURN(std::unique_ptr<CudnnConv> conv,
                   CudnnConv::Create(problem, handle_.get(), stream_.get(),
                                     options_.seed));
  ASSIGN_OR_RETURN(DeviceBuffer workspace,
                   DeviceBuffer::Allocate(static_cast<size_t>(cap)));

  // 1. Find, per math type; results kept per (algo, math type).
  std::map<std::pair<int, MathType>, AlgoResult> by_key;
  for (MathType math : SearchMathTypes(problem)) {
    absl::StatusOr<std::vector<CudnnConv::Entry>> entries =
        conv->Find(math, workspace.get(), workspace.bytes());
    if (!entries.ok()) {
      if (absl::IsFailedPrecondition(entries.status())) {
        // cuDNN supports no algorithm under this math type.
        for (int a = 0; a < conv->AlgoCount(); ++a) {
          AlgoResult r;
          r.algo = a;
          r.math_type = math;
          r.status = AlgoStatus::kNotSupported;
          by_key.emplace(std::make_pair(a, math), r);
        }
        continue;
      }
      return entries.status();
    }
    for (const CudnnConv::Entry& e : *entries) {
      AlgoResult r;
      r.algo = e.algo;
      r.math_type = math;
      r.deterministic = e.deterministic;
      if (e.status == CUDNN_STATUS_SUCCESS && e.time_ms >= 0) {
        r.status = AlgoStatus::kOk;
        r.median_ms = e.time_ms;
        r.samples = 1;
        // Find's perf.memory can be less than what the algorithm asks for
        // when run on its own: store the larger of the two.
        absl::StatusOr<int64_t> need = conv->WorkspaceSize(e.algo, math);
        r.workspace_bytes = need.ok() ? std::max(e.memory, *need) : e.memory;
      } else {
        absl::StatusOr<int64_t> need = conv->WorkspaceSize(e.algo, math);
        if (need.ok() && *need > cap) {
          r.status = AlgoStatus::kFailed;
          r.workspace_bytes = *need;
          r.error = absl::StrCat("needs ", *need,
                                 " bytes of workspace; the cap is ", cap);
        } else if (IsCudnnNotSupported(e.status)) {
          r.status = AlgoStatus::kNotSupported;
        } else {
          r.status = AlgoStatus::kFailed;
          r.error = cudnnGetErrorString(e.status);
          if (need.ok()) r.workspace_bytes = *need;
        }
      }
      by_key[{e.algo, math}] = r;
    }
  }
  RETURN_IF_ERROR(CheckSticky());

  SearchResult out;
  out.workspace_cap_bytes = cap;
  for (auto& [key, r] : by_key) out.results.push_back(r);
  SortResults(out.results);

  ASSIGN_OR_RETURN(CudaEvent ev_start, CudaEvent::Create());
  ASSIGN_OR_RETURN(CudaEvent ev_stop, CudaEvent::Create());
  auto run = [&](size_t idx) {
    const AlgoResult& r = out.results[idx];
    return conv->Run(r.algo, r.math_type, workspace.get(), workspace.bytes());
  };
  // One timed run of results[idx] on the stream, in ms.
  auto time_once = [&](size_t idx) -> absl::StatusOr<double> {
    RETURN_IF_ERROR(CudaStatusToAbsl(
        cudaEventRecord(ev_start.get(), stream_.get()), "cudaEventRecord"));
    RETURN_IF_ERROR(run(idx));
    RETURN_IF_ERROR(CudaStatusToAbsl(
        cudaEventRecord(ev_stop.get(), stream_.get()), "cudaEventRecord"));
    RETURN_IF_ERROR(CudaStatusToAbsl(cudaEventSynchronize(ev_stop.get()),
                                     "cudaEventSynchronize"));
    float ms = 0;
    RETURN_IF_ERROR(CudaStatusToAbsl(
        cudaEventElapsedTime(&ms, ev_start.get(), ev_stop.get()),
        "cudaEventElapsedTime"));
    return static_cast<double>(ms);
  };
  const absl::Duration budget = std::min(options_.retime_budget, timeout / 4);
  const absl::Time screen_start = absl::Now();

  // 2. Screen every OK result: one untimed run (CUDA loads kernels lazily, so
  // Find's single sample may include loading them) and one timed run. The
  // candidates for re-timing are chosen from these times.
  for (size_t i = 0; i < out.results.size(); ++i) {
    AlgoResult& r = out.results[i];
    if (r.status != AlgoStatus::kOk) continue;
    if (absl::Now() - screen_start >= budget) break;
    absl::Status s = run(i);
    absl::StatusOr<double> ms =
        s.ok() ? time_once(i) : absl::StatusOr<double>(s);
    if (!ms.ok()) {
      RETURN_IF_ERROR(CheckSticky());
      r.status = AlgoStatus::kFailed;
      r.error = std::string(ms.status().message());
      continue;
    }
    r.median_ms = *ms;
    r.spread_ms = 0;
    r.samples = 1;
    r.retimed = true;
  }
  SortResults(out.results);

  // 3. Re-time the leading candidates.
  std::vector<size_t> cand;  // indices into out.results
  for (size_t i = 0; i < out.results.size(); ++i) {
    const AlgoResult& r = out.results[i];
    if (r.status != AlgoStatus::kOk) break;
    const double best = out.results[0].median_ms;
    if (static_cast<int>(cand.size()) >= options_.max_candidates) break;
    if (static_cast<int>(cand.size()) >= options_.min_candidates &&
        r.median_ms > best * (1 + options_.retime_margin)) {
      break;
    }
    cand.push_back(i);
  }
  if (cand.empty()) return out;  // nothing supported: a negative answer

  auto mark_failed = [&](size_t idx, const absl::Status& s) {
    AlgoResult& r = out.results[idx];
    r.status = AlgoStatus::kFailed;
    r.error = std::string(s.message());
    cand.erase(std::find(cand.begin(), cand.end(), idx));
  };

  // Warm-up: every candidate at least twice and the GPU busy for a while, so
  // clocks have ramped up before anything is timed.
  const Clock::time_point warm_start = Clock::now();
  const auto warm_for = absl::ToChronoMilliseconds(options_.warmup);
  for (int iter = 0;; ++iter) {
    std::vector<size_t> snapshot = cand;
    for (size_t idx : snapshot) {
      absl::Status s = run(idx);
      if (!s.ok()) {
        RETURN_IF_ERROR(CheckSticky());
        mark_failed(idx, s);
      }
    }
    RETURN_IF_ERROR(CudaStatusToAbsl(cudaStreamSynchronize(stream_.get()),
                                     "cudaStreamSynchronize(warm-up)"));
    if (cand.empty()) break;
    if (iter >= 1 && (Clock::now() - warm_start >= warm_for || iter >= 1000)) {
      break;
    }
  }

  std::map<size_t, std::vector<double>> samples;
  const absl::Time retime_start = absl::Now();
  int rounds = 0;
  int stable = 0;
  size_t leader = cand.empty() ? 0 : cand[0];
  while (!cand.empty() && rounds < options_.max_rounds) {
    std::vector<size_t> order = cand;
    std::rotate(order.begin(), order.begin() + (rounds % order.size()),
                order.end());
    for (size_t idx : order) {
      absl::StatusOr<double> ms = time_once(idx);
      if (!ms.ok()) {
        RETURN_IF_ERROR(CheckSticky());
        mark_failed(idx, ms.status());
        samples.erase(idx);
        continue;
      }
      samples[idx].push_back(*ms);
    }
    ++rounds;
    if (cand.empty()) break;
    size_t best = cand[0];
    double best_ms = Median(samples[best]);
    for (size_t idx : cand) {
      const double m = Median(samples[idx]);
      if (m < best_ms) {
        best = idx;
        best_ms = m;
      }
    }
    stable = best == leader ? stable + 1 : 1;
    leader = best;
    if (rounds >= options_.min_rounds && stable >= options_.stable_rounds) break;
    if (rounds >= options_.min_rounds && absl::Now() - retime_start >= budget) {
      break;
    }
  }
  for (auto& [idx, v] : samples) {
    if (v.empty()) continue;
    AlgoResult& r = out.results[idx];
    r.median_ms = Median(v);
    r.spread_ms = *std::max_element(v.begin(), v.end()) -
                  *std::min_element(v.begin(), v.end());
    r.samples = static_cast<int>(v.size());
    r.retimed = true;
  }
  out.repeats = rounds;
  SortResults(out.results);

  // 3. Verify the fastest against reference algorithms on the same inputs.
  struct Reference {
    int algo;
    MathType math;
    std::vector<float> output;
  };
  std::vector<Reference> refs;
  std::vector<std::pair<int, MathType>> ref_order = {
      {0, MathType::kFma}, {1, MathType::kFma}, {0, MathType::kDefault}};
  for (const AlgoResult& r : out.results) {
    if (r.status == AlgoStatus::kOk) ref_order.push_back({r.algo, r.math_type});
  }
  for (const auto& [algo, math] : ref_order) {
    if (refs.size() >= 2) break;
    bool dup = false;
    for (const Reference& ref : refs) {
      dup |= ref.algo == algo && ref.math == math;
    }
    if (dup) continue;
    absl::StatusOr<int64_t> need = conv->WorkspaceSize(algo, math);
    if (!need.ok() || *need > cap) continue;
    if (!conv->Run(algo, math, workspace.get(), workspace.bytes()).ok()) {
      RETURN_IF_ERROR(CheckSticky());
      continue;
    }
    ASSIGN_OR_RETURN(std::vector<float> output, conv->ReadOutput());
    refs.push_back({algo, math, std::move(output)});
  }
  bool cpu_tried = false;
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (out.results.empty() || out.results[0].status != AlgoStatus::kOk) break;
    AlgoResult& chosen = out.results[0];
    absl::Status s =
        conv->Run(chosen.algo, chosen.math_type, workspace.get(),
                  workspace.bytes());
    std::string why;
    bool match = false;
    bool compared = false;
    if (s.ok()) {
      ASSIGN_OR_RETURN(std::vector<float> output, conv->ReadOutput());
      const double tol = VerifyTolerance(problem, chosen.math_type);
      bool other = false;
      for (const Reference& ref : refs) {
        other |= ref.algo != chosen.algo || ref.math != chosen.math_type;
      }
      if (!other && !cpu_tried) {
        // No other algorithm ran: compare with a CPU computation instead.
        cpu_tried = true;
        absl::StatusOr<std::vector<float>> cpu =
            conv->CpuReference(options_.cpu_reference_max_macs);
        if (cpu.ok()) refs.push_back({-1, MathType::kFma, std::move(*cpu)});
      }
      for (const Reference& ref : refs) {
        if (ref.algo == chosen.algo && ref.math == chosen.math_type) continue;
        compared = true;
        const double err = RelativeL2(output, ref.output);
        if (err <= tol) {
          match = true;
          break;
        }
        why = ref.algo < 0
                  ? absl::StrFormat(
                        "output differs from the CPU reference: relative L2 "
                        "%.3g > %.3g",
                        err, tol)
                  : absl::StrFormat(
                        "output differs from algo %d (%s): relative L2 %.3g "
                        "> %.3g",
                        ref.algo, MathTypeName(ref.math), err, tol);
      }
    } else {
      RETURN_IF_ERROR(CheckSticky());
      why = std::string(s.message());
    }
    if (!compared && s.ok()) break;  // the only reference is the chosen one
    if (match) {
      out.verified = true;
      break;
    }
    chosen.status = AlgoStatus::kFailed;
    chosen.error = why;
    SortResults(out.results);
  }
  return out;
}

}  // namespace tunedb
