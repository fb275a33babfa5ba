#include "bench/regret/regret_flags.h"

#include <map>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/strings/str_join.h"

namespace tunedb::regret {

std::optional<int> ParseRegretFlags(int argc, const char* const* argv,
                                    RegretFlags* flags, std::ostream& out,
                                    std::ostream& err) {
  flags->command_line =
      absl::StrJoin(std::vector<std::string>(argv, argv + argc), " ");
  CLI::App app(
      "tunedb_regret: for each convolution, how much slower than the best "
      "candidate are tunedb's choice, cudnnFind's first entry and cuDNN's "
      "heuristic, all re-timed together in one process on this GPU.",
      "tunedb_regret");
  app.footer(
      "Exit status: 0 done, 1 nothing measured or the GPU failed, 2 bad "
      "flags or input, 77 no usable GPU.");
  ProblemSetSpec& p = flags->problems;
  app.add_option("-m,--model", p.models,
                 "Built-in models, e.g. resnet50,vgg16,mobilenetv2,unet,"
                 "unet3d (see `tunedb models`)")
      ->delimiter(',');
  app.add_option("--problems", p.problems_file,
                 "File of key texts (problem or whole key), one a line");
  app.add_option("-b,--batch", p.batches, "Batch sizes, e.g. 8,32,64")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--ops", p.ops, "Passes: fwd,bwd_data,bwd_filter")
      ->capture_default_str();
  app.add_option("--dtype", p.dtypes, "fp32, fp32-no-tf32, fp16, bf16")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--layout", p.layouts,
                 "nchw, nhwc (3-D models use ncdhw/ndhwc)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--input", p.input,
                 "Model input size, e.g. 224 or 16x112x112 (default: the "
                 "model's)");
  app.add_option("--limit", p.limit,
                 "Measure only the first N problems after deduplication "
                 "(0: all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  TruthOptions& t = flags->truth;
  app.add_option("--rounds", t.rounds, "Interleaved timing rounds")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--warmup-ms", t.warmup_ms,
                 "Back-to-back runs before each problem's rounds")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--min-sample-ms", t.batch.min_sample_ms,
                 "A sample's batch of runs lasts at least this long")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--max-batch", t.batch.max_batch, "Most runs in one sample")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  std::string launch_mode = "direct";
  app.add_option("--launch-mode", launch_mode,
                 "How the truth launches runs: direct (cuDNN calls, launch "
                 "time included) or graph (CUDA-graph replays, GPU time)")
      ->check(CLI::IsMember({"direct", "graph"}))
      ->capture_default_str();
  const std::map<std::string, TruthOrder> orders = {
      {"rotating", TruthOrder::kRotating}, {"shuffled", TruthOrder::kShuffled}};
  app.add_option("--truth-order", t.order,
                 "How a round's order changes from round to round: rotating "
                 "(one cycle, started one later each round) or shuffled (a "
                 "new random order each round)")
      ->transform(CLI::CheckedTransformer(orders))
      ->default_str(std::string(TruthOrderName(t.order)));
  const std::map<std::string, DirectStart> starts = {
      {"untimed-run", DirectStart::kAfterUntimedRun},
      {"switch", DirectStart::kAtSwitch}};
  app.add_option("--search-retime-start", flags->retime_start,
                 "Where the search's re-timing samples start: untimed-run "
                 "(the steady cost of back-to-back calls) or switch (the "
                 "first call after another candidate's is timed)")
      ->transform(CLI::CheckedTransformer(starts))
      ->default_str(std::string(DirectStartName(flags->retime_start)));
  SwitchOptions& s = flags->switch_matrix;
  app.add_option("--switch-matrix", s.candidates,
                 "After the truth, time one call of each of the N fastest "
                 "candidates right after each other's calls (0: not)")
      ->check(CLI::Range(0, 32))
      ->capture_default_str();
  app.add_option("--switch-reps", s.reps, "Repetitions of every switch cell")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_flag("--preload-find,!--no-preload-find", flags->preload_find,
               "Run cudnnFind once before tunedb's search (default), so "
               "that neither the search nor the timed Find pays for loading "
               "the problem's kernels lazily; --no-preload-find: the search "
               "pays it")
      ->capture_default_str();
  app.add_option("--device", flags->device, "CUDA device ordinal")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--json", flags->json_path,
                 "Write every measurement and the summaries here");
  app.add_option("--csv", flags->csv_path, "Write one row per problem here");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    app.exit(e, out, err);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    app.exit(e, out, err);
    return kExitUsage;
  }
  // IsMember checked it.
  t.batch.mode = *ParseLaunchMode(launch_mode);
  return std::nullopt;
}

}  // namespace tunedb::regret
