// tunedb_regret: for a set of convolutions (built-in model shapes or a file
// of key texts), how much slower than the best candidate are tunedb's choice,
// cudnnFind's first entry and cuDNN's heuristic, all re-timed side by side in
// one process on this GPU. See bench/regret/README.md.
//
//   tunedb_regret --model resnet50,vgg16 --batch 8,32 --ops fwd,bwd_data
//       --dtype fp32,fp16 --layout nchw,nhwc --limit 200 --json out.json
//
// Exit status: 0 done, 1 nothing measured or the GPU failed, 2 bad flags or
// input, 77 no usable GPU (ctest counts it as skipped).
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "bench/regret/group_summary.h"
#include "bench/regret/measure_problem.h"
#include "bench/regret/problem_measurement.h"
#include "bench/regret/problem_set.h"
#include "bench/regret/regret_flags.h"
#include "bench/regret/regret_report.h"
#include "cudnn/cudnn_device.h"
#include "cudnn/cudnn_handles.h"
#include "server/search/cudnn_finder.h"

namespace tunedb::regret {
namespace {

// Writes `write(stream)` to `path`; false (with a message) if it cannot.
template <typename Write>
bool WriteFile(const std::string& path, Write write) {
  std::ofstream f(path);
  if (f) write(f);
  if (!f) {
    std::cerr << "tunedb_regret: cannot write '" << path << "'\n";
    return false;
  }
  return true;
}

int Fail(const char* what, const absl::Status& status) {
  std::cerr << "tunedb_regret: " << what << ": " << status.ToString() << "\n";
  return kExitFailed;
}

int Main(int argc, char** argv) {
  RegretFlags flags;
  if (std::optional<int> exit =
          ParseRegretFlags(argc, argv, &flags, std::cout, std::cerr)) {
    return *exit;
  }
  absl::StatusOr<ProblemSet> set = BuildProblemSet(flags.problems);
  if (!set.ok()) {
    std::cerr << "tunedb_regret: " << set.status().message() << "\n";
    return kExitUsage;
  }
  if (set->problems.empty()) {
    std::cerr << "tunedb_regret: no problems to measure\n";
    return kExitUsage;
  }
  absl::StatusOr<int> gpus = CudaDeviceCount();
  if (!gpus.ok()) {
    std::cerr << "tunedb_regret: no CUDA GPU: " << gpus.status().message()
              << " (skipped)\n";
    return kExitSkip;
  }
  if (*gpus == 0) {
    std::cerr << "tunedb_regret: no CUDA GPU (skipped)\n";
    return kExitSkip;
  }
  if (flags.device >= *gpus) {
    std::cerr << "tunedb_regret: --device " << flags.device << " out of range ("
              << *gpus << " GPUs)\n";
    return kExitUsage;
  }

  CudnnFinder::Options finder_options;
  finder_options.ordinal = flags.device;
  finder_options.retime_start = flags.retime_start;
  // Create() makes the device current on this thread for what follows.
  absl::StatusOr<std::unique_ptr<CudnnFinder>> finder =
      CudnnFinder::Create(finder_options);
  if (!finder.ok()) return Fail("cuDNN finder", finder.status());
  absl::StatusOr<DeviceInfo> device = QueryCudaDevice(flags.device);
  if (!device.ok()) return Fail("device", device.status());
  absl::StatusOr<CudnnHandle> handle = CreateCudnnHandle();
  if (!handle.ok()) return Fail("cuDNN handle", handle.status());
  absl::StatusOr<CudaStream> stream = CudaStream::Create();
  if (!stream.ok()) return Fail("CUDA stream", stream.status());

  RunInfo info;
  info.command_line = flags.command_line;
  info.device = *device;
  info.launch_mode = std::string(LaunchModeName(flags.truth.batch.mode));
  info.rounds = flags.truth.rounds;
  info.warmup_ms = flags.truth.warmup_ms;
  info.min_sample_ms = flags.truth.batch.min_sample_ms;
  info.truth_order = std::string(TruthOrderName(flags.truth.order));
  info.retime_start = std::string(DirectStartName(flags.retime_start));
  info.problems = static_cast<int64_t>(set->problems.size());
  info.duplicates = set->duplicates;
  info.dropped_by_limit = set->dropped_by_limit;
  PrintHeader(std::cout, info);
  std::cout.flush();

  RegretContext ctx;
  ctx.finder = finder->get();
  ctx.handle = handle->get();
  ctx.stream = stream->get();
  ctx.truth = flags.truth;
  ctx.preload_find = flags.preload_find;
  ctx.switch_matrix = flags.switch_matrix;
  std::vector<ProblemMeasurement> measurements;
  absl::Status fatal;
  for (size_t i = 0; i < set->problems.size(); ++i) {
    ProblemMeasurement m;
    m.problem = set->problems[i];
    fatal = MeasureProblem(ctx, m);
    if (!fatal.ok()) m.error = std::string(fatal.message());
    std::cerr << ProgressLine(i, set->problems.size(), m) << std::endl;
    measurements.push_back(std::move(m));
    if (!fatal.ok()) break;
  }

  const std::vector<GroupSummary> summaries = Summarize(measurements);
  PrintSummaryTables(std::cout, summaries);
  bool written = true;
  if (!flags.json_path.empty()) {
    written &= WriteFile(flags.json_path, [&](std::ostream& f) {
      f << ReportJson(info, measurements, summaries).dump(2) << "\n";
    });
  }
  if (!flags.csv_path.empty()) {
    written &= WriteFile(flags.csv_path,
                         [&](std::ostream& f) { WriteCsv(f, measurements); });
  }
  if (!fatal.ok()) return Fail("the GPU failed; stopped", fatal);
  int measured = 0;
  for (const ProblemMeasurement& m : measurements) {
    if (m.error.empty()) ++measured;
  }
  if (measured == 0) {
    std::cerr << "tunedb_regret: no problem could be measured\n";
    return kExitFailed;
  }
  return written ? kExitOk : kExitFailed;
}

}  // namespace
}  // namespace tunedb::regret

int main(int argc, char** argv) { return tunedb::regret::Main(argc, argv); }
