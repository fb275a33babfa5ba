#include "bench/regret/switch_matrix.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <utility>

#include "common/status_macros.h"
#include "cudnn/cudnn_handles.h"
#include "cudnn/cudnn_status.h"
#include "server/search/algo_failure.h"
#include "server/search/run_timer.h"
#include "server/search/sample_stats.h"

namespace tunedb::regret {

absl::Status MeasureSwitchMatrix(CudnnConv& conv, cudaStream_t stream,
                                 const Workspace& workspace,
                                 const SwitchOptions& options,
                                 ProblemMeasurement& m) {
  if (options.candidates <= 0) return absl::OkStatus();
  SwitchMatrixResult& out = m.switch_matrix.emplace();
  std::vector<const TimedCandidate*> timed;
  for (const TimedCandidate& c : m.candidates) {
    if (c.timed()) timed.push_back(&c);
  }
  std::sort(timed.begin(), timed.end(),
            [](const TimedCandidate* a, const TimedCandidate* b) {
              return a->median_ms < b->median_ms;
            });
  timed.resize(std::min(timed.size(), static_cast<size_t>(options.candidates)));
  const size_t n = timed.size();
  if (n == 0) {
    out.error = "no timed candidate";
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(CudaEvent start, CudaEvent::Create());
  ASSIGN_OR_RETURN(CudaEvent stop, CudaEvent::Create());
  const auto run = [&](size_t i, int count) -> absl::Status {
    for (int k = 0; k < count; ++k) {
      RETURN_IF_ERROR(conv.Run(timed[i]->algo, timed[i]->math, workspace.get(),
                               workspace.bytes()));
    }
    return absl::OkStatus();
  };
  const auto wait = [&] {
    return CudaStatusToAbsl(cudaStreamSynchronize(stream),
                            "cudaStreamSynchronize");
  };
  // One direct sample of member i, the search's way (run_timer.h): from an
  // idle GPU, starting as `from` says.
  const auto sample = [&](size_t i, int batch, DirectStart from) {
    return TimeDirectRuns(conv, stream, timed[i]->algo, timed[i]->math,
                          workspace.get(), workspace.bytes(), batch,
                          start.get(), stop.get(), from);
  };
  // Cells (p, c) and, as (c, n), each candidate's steady sample.
  std::vector<std::pair<size_t, size_t>> cells;
  for (size_t p = 0; p < n; ++p) {
    for (size_t c = 0; c < n; ++c) cells.push_back({p, c});
  }
  for (size_t c = 0; c < n; ++c) cells.push_back({c, n});
  std::vector<std::vector<std::vector<double>>> first(
      n, std::vector<std::vector<double>>(n));
  std::vector<std::vector<std::vector<double>>> host(
      n, std::vector<std::vector<double>>(n));
  std::vector<std::vector<double>> steady(n);
  std::mt19937_64 rng(options.seed);
  absl::Status failed;
  for (int rep = 0; rep < options.reps && failed.ok(); ++rep) {
    std::shuffle(cells.begin(), cells.end(), rng);
    for (const auto& [p, c] : cells) {
      absl::StatusOr<DirectSample> t;
      if (c == n) {
        // The steady cost: after one untimed call.
        t = sample(p,
                   SampleBatch(timed[p]->median_ms, options.steady_sample_ms,
                               /*max_batch=*/1000),
                   DirectStart::kAfterUntimedRun);
        if (t.ok()) steady[p].push_back(t->launch_ms);
      } else {
        // One call of c at the switch from p's calls.
        const absl::Status primed = run(p, options.prime_runs);
        t = primed.ok() ? sample(c, 1, DirectStart::kAtSwitch)
                        : absl::StatusOr<DirectSample>(primed);
        if (t.ok()) {
          first[p][c].push_back(t->launch_ms);
          host[p][c].push_back(t->host_ms);
        }
      }
      if (!t.ok()) {
        RETURN_IF_ERROR(CheckStickyError());
        failed = t.status();
        break;
      }
    }
  }
  // Host time of each call: after a switch, back to back (runs) and
  // alternating with the next member (alternating).
  const int calls = std::max(options.run_calls, 1);
  std::vector<std::vector<std::vector<double>>> runs(
      n, std::vector<std::vector<double>>(calls));
  std::vector<std::vector<std::vector<double>>> alternating(
      n, std::vector<std::vector<double>>(calls));
  const auto host_of = [&](size_t i) -> absl::StatusOr<double> {
    const auto t0 = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(run(i, 1));
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - t0)
        .count();
  };
  for (int rep = 0; rep < options.reps && failed.ok() && n > 1; ++rep) {
    for (size_t c = 0; c < n && failed.ok(); ++c) {
      const size_t p = (c + 1) % n;
      absl::Status s = run(p, options.prime_runs);
      if (s.ok()) s = wait();
      for (int k = 0; k < calls && s.ok(); ++k) {
        absl::StatusOr<double> h = host_of(c);
        if (h.ok()) runs[c][k].push_back(*h);
        s = h.status();
      }
      if (s.ok()) s = wait();
      for (int k = 0; k < calls && s.ok(); ++k) {
        s = run(p, 1);
        if (!s.ok()) break;
        absl::StatusOr<double> h = host_of(c);
        if (h.ok()) alternating[c][k].push_back(*h);
        s = h.status();
      }
      if (s.ok()) s = wait();
      if (!s.ok()) {
        RETURN_IF_ERROR(CheckStickyError());
        failed = s;
      }
    }
  }
  if (!failed.ok()) {
    out.error = std::string(failed.message());
    return absl::OkStatus();
  }
  if (n > 1) {
    out.run_host_ms.assign(n, std::vector<double>(calls));
    out.alternating_host_ms.assign(n, std::vector<double>(calls));
    for (size_t c = 0; c < n; ++c) {
      for (int k = 0; k < calls; ++k) {
        out.run_host_ms[c][k] = Median(runs[c][k]);
        out.alternating_host_ms[c][k] = Median(alternating[c][k]);
      }
    }
  }
  out.first_ms.assign(n, std::vector<double>(n));
  out.first_host_ms.assign(n, std::vector<double>(n));
  for (size_t c = 0; c < n; ++c) {
    out.members.push_back({timed[c]->algo, timed[c]->math, Median(steady[c])});
    for (size_t p = 0; p < n; ++p) {
      out.first_ms[p][c] = Median(first[p][c]);
      out.first_host_ms[p][c] = Median(host[p][c]);
    }
  }
  return absl::OkStatus();
}

}  // namespace tunedb::regret
