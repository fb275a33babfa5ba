#include "bench/regret/truth_timer.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/status_macros.h"
#include "cudnn/cudnn_status.h"
#include "server/search/algo_failure.h"
#include "server/search/sample_stats.h"

namespace tunedb::regret {
namespace {

// Records `why` on `c` unless the CUDA context broke (then that is returned).
absl::Status Fail(TimedCandidate& c, const absl::Status& why) {
  RETURN_IF_ERROR(CheckStickyError());
  c.error = std::string(why.message());
  c.samples_ms.clear();
  return absl::OkStatus();
}

// Runs every candidate once, waiting for each, so that one that fails is
// known; then passes of back-to-back runs of all of them, waiting only at the
// end of a pass, until `warmup_ms` has passed since the start.
absl::Status WarmUp(CudnnConv& conv, cudaStream_t stream,
                    const Workspace& workspace, double warmup_ms,
                    std::vector<TimedCandidate>& candidates) {
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed_ms = [&start] {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - start)
        .count();
  };
  const auto run = [&](const TimedCandidate& c) {
    return conv.Run(c.algo, c.math, workspace.get(), workspace.bytes());
  };
  const auto wait = [&] {
    return CudaStatusToAbsl(cudaStreamSynchronize(stream),
                            "cudaStreamSynchronize");
  };
  bool any = false;
  for (TimedCandidate& c : candidates) {
    if (!c.error.empty()) continue;
    absl::Status ran = run(c);
    if (ran.ok()) ran = wait();
    if (!ran.ok()) {
      RETURN_IF_ERROR(Fail(c, ran));
      continue;
    }
    any = true;
  }
  while (any && elapsed_ms() < warmup_ms) {
    for (TimedCandidate& c : candidates) {
      if (!c.error.empty()) continue;
      if (absl::Status ran = run(c); !ran.ok()) {
        RETURN_IF_ERROR(Fail(c, ran));
      }
    }
    if (absl::Status waited = wait(); !waited.ok()) {
      // A run failed on the device after it ran once: the rounds will say
      // which.
      RETURN_IF_ERROR(CheckStickyError());
      break;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::string_view TruthOrderName(TruthOrder order) {
  return order == TruthOrder::kShuffled ? "shuffled" : "rotating";
}

absl::Status TimeCandidates(CudnnConv& conv, cudaStream_t stream,
                            const Workspace& workspace,
                            const TruthOptions& options,
                            std::vector<TimedCandidate>& candidates) {
  RETURN_IF_ERROR(
      WarmUp(conv, stream, workspace, options.warmup_ms, candidates));
  const size_t n = candidates.size();
  std::vector<std::unique_ptr<BatchTimer>> timers(n);
  for (size_t i = 0; i < n; ++i) {
    TimedCandidate& c = candidates[i];
    if (!c.error.empty()) continue;
    absl::StatusOr<std::unique_ptr<BatchTimer>> t =
        BatchTimer::Create(&conv, stream, c.algo, c.math, workspace.get(),
                           workspace.bytes(), options.batch);
    if (!t.ok()) {
      RETURN_IF_ERROR(Fail(c, t.status()));
      continue;
    }
    timers[i] = std::move(*t);
    c.batch = timers[i]->batch();
    c.graphed = timers[i]->graphed();
  }
  std::vector<size_t> order(n);
  std::mt19937_64 rng(options.order_seed);
  for (int round = 0; round < options.rounds; ++round) {
    for (size_t j = 0; j < n; ++j) {
      order[j] = (j + static_cast<size_t>(round)) % n;
    }
    if (options.order == TruthOrder::kShuffled) {
      std::shuffle(order.begin(), order.end(), rng);
    }
    for (size_t i : order) {
      TimedCandidate& c = candidates[i];
      if (timers[i] == nullptr || !c.error.empty()) continue;
      absl::StatusOr<double> ms = timers[i]->Sample();
      if (!ms.ok()) {
        RETURN_IF_ERROR(Fail(c, ms.status()));
        timers[i].reset();
        continue;
      }
      c.samples_ms.push_back(*ms);
    }
  }
  for (TimedCandidate& c : candidates) {
    if (c.timed()) c.median_ms = Median(c.samples_ms);
  }
  return absl::OkStatus();
}

}  // namespace tunedb::regret
