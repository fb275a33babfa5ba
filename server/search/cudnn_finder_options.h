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
  // a search does after its own cudnnFind calls — screening, re-timing and
  // verification; not the buffer set-up — may spend this many times the
  // wall time of those Find calls, and at most min(max_search_budget,
  // search timeout / 4). 0.4: on the H200 (bench/results/
  // 2026-12-01-h200-budget) a search's own Find calls cost 1.0-1.27x a
  // caller's timed Find of the same problems and set-up 0.01-0.1x (its
  // first problem more), and bench/regret/budget_phases.py --estimate puts
  // the recorded model sets at 1.25-1.85x their Find calls with this
  // factor (MobileNetV2 b32 bf16 at 1.93x: its own Find calls alone are
  // 1.24x), 1.25-1.96x with 0.5, 1.25-1.92x with 0.3: on sets of small
  // problems (Find under 10 ms a problem) the floors decide. The floors can
  // exceed the budget on one problem: the first two screened candidates,
  // two re-timing rounds of the near-ties of a pool that is not a clear
  // leader's (with samples shortened to min_batch_runs), and verification,
  // which always runs.
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
  // about graph_sample_ms (GPU time). Direct batches are long because a
  // host-heavy algorithm's calls get cheaper over the first few after
  // another algorithm's (0.16 ms a call in batches of 2, 0.10 in batches of
  // 7, on an H200): shorter ones misrank it against GPU-bound ones. Where
  // the budget cannot pay for two rounds of sample_ms batches, batches are
  // shortened, to min_batch_runs runs at least.
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
  // alternates between convolutions do and as the regret harness's samples
  // do, or after an untimed run (the steady cost of back-to-back calls).
  // On an H200 (bench/results/2026-12-01-h200-switch) a host-heavy
  // algorithm's first call after another's costs up to 3.6x its later ones
  // (algorithm 1 with tensor ops, ResNet-50 b8 fp16, all three passes:
  // 0.12-0.35 ms against 0.06-0.22 for the calls after it). On the host-bound
  // ResNet-50 b8 fp16 NCHW set, samples from the switch left 3-6 of 68 picks >
  // 5 % slower in four runs (cudnnFind's first entry 8-10 in the same runs),
  // samples after an untimed run 5 and 9 in two (Find 6 and 10).
  // - The switch's cost is spread over the batch: a member sampled with
  //   shortened batches (a tight budget, min_batch_runs) carries more of it
  //   per run than one sampled with full ones.
  // - Screening always starts after an untimed run: its shorter batches
  //   would weigh the switch too much, and an optimistic screen keeps a
  //   host-heavy candidate in the pool.
  DirectStart retime_start = DirectStart::kAtSwitch;
  double graph_sample_ms = 0.3;
  int max_batch = 256;
  int min_batch_runs = 8;
  // A clear leader: every other candidate's Find time and (where screened)
  // screened time are at least (1 + clear_lead) times the leader's. Its
  // pool is the leader alone, for one round (one direct sample, one
  // replay). In the H200 searches of bench/results/2026-12-01-h200-budget
  // (455 problems) 78 % of the pools re-timed were one candidate or had a
  // runner-up 25 % or more behind after re-timing. Twins — one algorithm under
  // two math types whose Find and screened times are both within tie_margin of
  // each other (mostly the same kernel) — count as one candidate: the slower by
  // screen is left out of the pool (it keeps its screened sample) unless it
  // would rank first.
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
  // spaced windows, output_windows.h) of the choice and its references:
  // 64 windows of 1024, a quarter of what it read back before (2^18: 1 MiB
  // of f32 per output, twice a search, converted and compared on the host;
  // verification then cost 1-5 ms on problems whose runs take 0.1 ms, on
  // the H200). An algorithm that is wrong all over, or on a regular part
  // of every tile, shows in every window; one wrong in a single small
  // region (one output channel, one corner tile) can be missed here as it
  // could with 2^18.
  int64_t verify_max_elements = int64_t{1} << 16;
  // It falls back to a CPU computation when no other algorithm runs, for
  // problems of at most this many multiply-accumulates.
  int64_t cpu_reference_max_macs = int64_t{1} << 29;
  // --- Graph API (graph_search.h). The heuristic modes whose engine
  // configs are the candidates, in order (repeats dropped).
  std::vector<HeuristicMode> graph_heuristic_modes = {
      HeuristicMode::kA, HeuristicMode::kB, HeuristicMode::kFallback};
  // Engines that compile at run time take
  // 0.5-0.9 s each to build cold on an H200: a search builds them while
  // their builds so far took less than this.
  absl::Duration graph_compile_budget = absl::Seconds(2);
  // Plans kept serialized in the record: the leader and the runners-up
  // whose cost is within graph_plan_margin of it, graph_plans_kept in all.
  int graph_plans_kept = 3;
  double graph_plan_margin = 0.10;
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SEARCH_CUDNN_FINDER_OPTIONS_H_
