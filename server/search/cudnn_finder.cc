#include "server/search/cudnn_finder.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cudnn/cudnn_conv.h"
#include "cudnn/cudnn_device.h"
#include "cudnn/cudnn_status.h"
#include "common/status_macros.h"

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
        r.gpu.median_ms = e.time_ms;
        r.gpu.samples = 1;
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
  using Key = std::pair<int, MathType>;
  auto find = [&](const Key& key) -> AlgoResult* {
    for (AlgoResult& r : out.results) {
      if (r.algo == key.first && r.math_type == key.second) return &r;
    }
    return nullptr;
  };
  auto run = [&](const AlgoResult& r) {
    return conv->Run(r.algo, r.math_type, workspace.get(), workspace.bytes());
  };
  // `batch` back-to-back runs between two events; the time of one, in ms.
  // Batching keeps launch gaps and event overhead out of short kernels.
  auto time_batch = [&](const AlgoResult& r,
                        int batch) -> absl::StatusOr<double> {
    RETURN_IF_ERROR(CudaStatusToAbsl(
        cudaEventRecord(ev_start.get(), stream_.get()), "cudaEventRecord"));
    for (int i = 0; i < batch; ++i) RETURN_IF_ERROR(run(r));
    RETURN_IF_ERROR(CudaStatusToAbsl(
        cudaEventRecord(ev_stop.get(), stream_.get()), "cudaEventRecord"));
    RETURN_IF_ERROR(CudaStatusToAbsl(cudaEventSynchronize(ev_stop.get()),
                                     "cudaEventSynchronize"));
    float ms = 0;
    RETURN_IF_ERROR(CudaStatusToAbsl(
        cudaEventElapsedTime(&ms, ev_start.get(), ev_stop.get()),
        "cudaEventElapsedTime"));
    return static_cast<double>(ms) / batch;
  };
  auto fail = [&](AlgoResult& r, const absl::Status& s) -> absl::Status {
    RETURN_IF_ERROR(CheckSticky());
    r.status = AlgoStatus::kFailed;
    r.error = std::string(s.message());
    return absl::OkStatus();
  };
  const absl::Duration budget = std::min(options_.retime_budget, timeout / 4);
  const absl::Time timing_start = absl::Now();
  std::map<Key, std::unique_ptr<RunTimer>> timers;
  // A timed sample of r through its RunTimer (made with `batch` on first use).
  auto sample = [&](const AlgoResult& r, int batch) -> absl::StatusOr<double> {
    std::unique_ptr<RunTimer>& t = timers[{r.algo, r.math_type}];
    if (t == nullptr) {
      ASSIGN_OR_RETURN(t, RunTimer::Create(conv.get(), stream_.get(), r.algo,
                                           r.math_type, workspace.get(),
                                           workspace.bytes(), batch));
    }
    return t->Sample(ev_start.get(), ev_stop.get());
  };

  // 2. Screen every OK result: one untimed run (CUDA loads kernels lazily, so
  // Find's single sample may include loading them), one timed run to size
  // the batch, then the best of two batched samples.
  for (AlgoResult& r : out.results) {
    if (r.status != AlgoStatus::kOk) continue;
    if (absl::Now() - timing_start >= budget) break;
    absl::Status s = run(r);
    absl::StatusOr<double> one =
        s.ok() ? time_batch(r, 1) : absl::StatusOr<double>(s);
    if (!one.ok()) {
      RETURN_IF_ERROR(fail(r, one.status()));
      continue;
    }
    const int batch = static_cast<int>(std::clamp(
        std::ceil(options_.sample_ms / std::max(*one, 1e-3)), 1.0,
        static_cast<double>(options_.max_batch)));
    double best = *one;
    for (int i = 0; i < 2; ++i) {
      absl::StatusOr<double> ms = sample(r, batch);
      if (!ms.ok()) {
        RETURN_IF_ERROR(fail(r, ms.status()));
        break;
      }
      best = i == 0 ? *ms : std::min(best, *ms);
    }
    if (r.status != AlgoStatus::kOk) continue;
    r.gpu.median_ms = best;
    r.gpu.spread_ms = 0;
    r.gpu.samples = 1;
    r.retimed = true;
  }
  SortResults(out.results);

  // 3. Re-time the leading candidates together, interleaved, round by
  // round. A result outside the pool that is within the margin of the pool's
  // leader joins it and the rounds go on, so the fastest result always has
  // the full number of samples.
  std::map<Key, std::vector<double>> samples;
  std::vector<Key> pool;
  auto median_of = [&](const Key& k) { return Median(samples[k]); };
  int rounds = 0;
  for (int pass = 0; pass < 4; ++pass) {
    // Extend the pool.
    double leader_ms = -1;
    for (const Key& k : pool) {
      const double m = median_of(k);
      if (leader_ms < 0 || m < leader_ms) leader_ms = m;
    }
    int added = 0;
    for (const AlgoResult& r : out.results) {
      if (r.status != AlgoStatus::kOk) break;
      const Key key{r.algo, r.math_type};
      if (std::find(pool.begin(), pool.end(), key) != pool.end()) continue;
      const double ref = leader_ms < 0 ? out.results[0].gpu.median_ms : leader_ms;
      const bool within = r.gpu.median_ms <= ref * (1 + options_.retime_margin);
      const bool needed = static_cast<int>(pool.size()) <
                          options_.min_candidates;
      const bool room =
          static_cast<int>(pool.size()) < options_.max_candidates ||
          (leader_ms >= 0 && r.gpu.median_ms < leader_ms);
      if ((within || needed) && room) {
        pool.push_back(key);
        ++added;
      }
    }
    if (pool.empty() || (pass > 0 && added == 0)) break;

    // Warm-up: the GPU busy for a while so clocks have ramped up.
    if (pass == 0) {
      const Clock::time_point warm_start = Clock::now();
      const auto warm_for = absl::ToChronoMilliseconds(options_.warmup);
      for (int iter = 0; iter < 1000; ++iter) {
        for (const Key& k : pool) {
          AlgoResult* r = find(k);
          if (r->status != AlgoStatus::kOk) continue;
          absl::Status s = run(*r);
          if (!s.ok()) RETURN_IF_ERROR(fail(*r, s));
        }
        RETURN_IF_ERROR(CudaStatusToAbsl(cudaStreamSynchronize(stream_.get()),
                                         "cudaStreamSynchronize(warm-up)"));
        if (Clock::now() - warm_start >= warm_for) break;
      }
    }

    // Rounds, until every member has min_rounds samples and the leader has
    // held for stable_rounds, or max_rounds, or the budget.
    int stable = 0;
    Key leader{-1, MathType::kDefault};
    for (int round = 0; round < options_.max_rounds; ++round) {
      std::vector<Key> order;
      for (const Key& k : pool) {
        if (find(k)->status == AlgoStatus::kOk) order.push_back(k);
      }
      if (order.empty()) break;
      std::rotate(order.begin(), order.begin() + (round % order.size()),
                  order.end());
      for (const Key& k : order) {
        AlgoResult* r = find(k);
        absl::StatusOr<double> ms = sample(*r, 1);
        if (!ms.ok()) {
          RETURN_IF_ERROR(fail(*r, ms.status()));
          samples.erase(k);
          continue;
        }
        samples[k].push_back(*ms);
      }
      rounds = std::max(rounds, round + 1);
      Key best{-1, MathType::kDefault};
      double best_ms = 0;
      size_t fewest = SIZE_MAX;
      for (const Key& k : order) {
        if (!samples.count(k)) continue;
        fewest = std::min(fewest, samples[k].size());
        const double m = median_of(k);
        if (best.first < 0 || m < best_ms) {
          best = k;
          best_ms = m;
        }
      }
      stable = best == leader ? stable + 1 : 1;
      leader = best;
      const bool enough =
          fewest != SIZE_MAX &&
          static_cast<int>(fewest) >= options_.min_rounds;
      if (enough && stable >= options_.stable_rounds) break;
      if (enough && absl::Now() - timing_start >= budget) break;
    }
    for (const auto& [k, v] : samples) {
      if (v.empty()) continue;
      AlgoResult* r = find(k);
      r->gpu.median_ms = Median(v);
      r->gpu.spread_ms = *std::max_element(v.begin(), v.end()) -
                     *std::min_element(v.begin(), v.end());
      r->gpu.samples = static_cast<int>(v.size());
      r->retimed = true;
    }
    SortResults(out.results);
    if (absl::Now() - timing_start >= budget) break;
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
