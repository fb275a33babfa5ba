// CudnnFinderOptions: how a CudnnFinder searches — the device, what it
// screens and re-times after cudnnFind, the time it may spend after Find (a
// share of what its own Find calls cost, search_budget.h), the timed sample
// sizes and the verification limits. The search phases (screen.h,
// retime.h, verify.h) read it.
//
// Thread safety: a plain value type.
#ifndef TUNEDB_SERVER_SEARCH_CUDNN_FINDER_OPTIONS_H_
#define TUNEDB_SERVER_SEARCH_CUDNN_FINDER_OPTIONS_H_

#include <cstdint>
#include <vector>

#include "absl/time/time.h"
#include "cudnn/backend_graph.h"
#include "server/search/run_timer.h"

namespace tunedb {

struct CudnnFinderOptions {
  int ordinal = 0;  // CUDA device ordinal

  // --- Budget (search_budget.h, the one place that spends it). Everything
  // a search does after its own cudnnFind calls (screening, re-timing and
  // verification; not the buffer set-up) may spend this many times the wall
  // time of those Find calls, at most min(max_search_budget, search timeout
  // / 4). The floors (search_budget.h) can exceed it on one problem. Why
  // 0.4: docs/gpu.md, "The budget".
  double search_budget_factor = 0.4;
  absl::Duration max_search_budget = absl::Seconds(3);
  // Screening may spend this share of what the budget leaves once
  // verification's predicted cost is set aside; re-timing gets the rest.
  double screen_share = 0.4;
  // Verification's predicted cost is the Find times of the choice and its
  // first reference plus this (read-back, synchronisation).
  double verify_overhead_ms = 0.3;

  // --- Screening: the OK candidates whose Find time is within this factor
  // of Find's fastest (at most max_screened of them, fastest first) get one
  // batch of direct launches lasting about screen_sample_ms.
  double screen_ratio = 3.0;
  int max_screened = 8;
  double screen_sample_ms = 0.3;

  // --- Re-timing: the screened candidates within retime_margin of the
  // screened fastest (at least min_candidates, at most max_candidates) are
  // timed in interleaved rounds, each a batch of direct launches lasting
  // about sample_ms, every other round also a CUDA-graph replay lasting
  // about graph_sample_ms (GPU time). Direct batches are long so that a
  // host-heavy algorithm's costlier first calls do not misrank it
  // (docs/gpu.md). Where the budget cannot pay for two rounds of sample_ms
  // batches, batches are shortened, to min_batch_runs runs at least.
  double retime_margin = 0.15;
  int min_candidates = 2;
  int max_candidates = 4;
  int min_rounds = 2;
  int max_rounds = 12;
  // The leader is settled when every other member is either a near-tie
  // (median within tie_margin of the leader's: either is as good a choice)
  // or clearly slower (its fastest sample slower than the leader's median).
  double tie_margin = 0.02;
  // The first two rounds, which run whatever the budget, time the whole
  // pool where the budget pays for it, else only the near-ties: the leader
  // and the members within floor_margin of it (by their samples so far,
  // else their screened times).
  double floor_margin = 0.05;
  double sample_ms = 1.2;
  // Where a re-timing direct sample starts (run_timer.h): at the switch
  // from the member timed before it, as the calls of a program that
  // alternates between convolutions do (the default), or after an untimed
  // run (the steady cost of back-to-back calls). The switch's cost is spread
  // over the batch, so a member sampled with shortened batches carries more
  // of it per run. Screening always starts after an untimed run. The
  // measurements behind the default: docs/gpu.md, "Re-time the leaders".
  DirectStart retime_start = DirectStart::kAtSwitch;
  double graph_sample_ms = 0.3;
  int max_batch = 256;
  int min_batch_runs = 8;
  // A clear leader: every other candidate's Find time and (where screened)
  // screened time are at least (1 + clear_lead) times the leader's. Its
  // pool is the leader alone, for one round (one direct sample, one
  // replay). Twins (one algorithm under two math types whose Find and
  // screened times are both within tie_margin of each other) count as one
  // candidate: the slower by screen is left out of the pool (it keeps its
  // screened sample) unless it would rank first.
  double clear_lead = 0.25;

  // --- Clocks. The GPU idles at a low clock and ramps up under load. A
  // search that finds the SM clock below warm_clock_fraction of its highest
  // (through NVML, gpu_clocks.h) first keeps the GPU busy until it is not,
  // for at most `warmup`, so that Find does not time a clocked-down GPU.
  // Where NVML cannot say, a search that starts after this finder has been
  // idle for idle_before_warmup warms up for `warmup`.
  double warm_clock_fraction = 0.9;
  absl::Duration warmup = absl::Milliseconds(100);
  absl::Duration idle_before_warmup = absl::Seconds(1);

  uint64_t seed = 20260101;  // input data seed

  // --- Verification compares at most this many output elements (evenly
  // spaced windows, output_windows.h: 64 windows of 1024) of the choice and
  // its references. An algorithm wrong all over, or on a regular part of
  // every tile, shows in every window; one wrong only in a small region
  // (one output channel, one corner tile) can be missed.
  int64_t verify_max_elements = int64_t{1} << 16;
  // It falls back to a CPU computation when no other algorithm runs, for
  // problems of at most this many multiply-accumulates.
  int64_t cpu_reference_max_macs = int64_t{1} << 29;
  // --- Graph API (graph_search.h). The heuristic modes whose engine
  // configs are the candidates, in order (repeats dropped).
  std::vector<HeuristicMode> graph_heuristic_modes = {
      HeuristicMode::kA, HeuristicMode::kB, HeuristicMode::kFallback};
  // Engines that compile at run time (slow to build: docs/graph-api.md) are
  // built while the search's builds so far took less than this.
  absl::Duration graph_compile_budget = absl::Seconds(2);
  // Plans kept serialized in the record: the leader and the runners-up
  // whose cost is within graph_plan_margin of it, graph_plans_kept in all.
  int graph_plans_kept = 3;
  double graph_plan_margin = 0.10;
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SEARCH_CUDNN_FINDER_OPTIONS_H_
