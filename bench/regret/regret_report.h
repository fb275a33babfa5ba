// What a regret run prints and writes: the header (GPU, driver, cuDNN,
// command line), a progress line per problem, the summary tables, the JSON
// report (every per-problem measurement and the summaries) and the
// per-problem CSV.
//
// Thread safety: pure functions of their arguments (writing to the given
// streams).
#ifndef TUNEDB_BENCH_REGRET_REGRET_REPORT_H_
#define TUNEDB_BENCH_REGRET_REGRET_REPORT_H_

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "bench/regret/group_summary.h"
#include "bench/regret/problem_measurement.h"
#include "common/device_info.h"
#include "nlohmann/json.hpp"

namespace tunedb::regret {

// The run as a whole.
struct RunInfo {
  std::string command_line;
  DeviceInfo device;        // its key's cudnn_version is cudnnGetVersion()
  std::string launch_mode;  // "direct" or "graph"
  int rounds = 0;
  double warmup_ms = 0;
  double min_sample_ms = 0;
  std::string truth_order;   // "rotating" or "shuffled" (TruthOrder)
  std::string retime_start;  // the search's: "untimed-run" or "switch"
  int64_t problems = 0;
  int64_t duplicates = 0;
  int64_t dropped_by_limit = 0;
};

// "# ..." lines: the GPU, driver, cuDNN and CUDA versions, the command line
// and how the truth is timed.
void PrintHeader(std::ostream& out, const RunInfo& info);

// "[3/12] resnet18/conv1 fwd ...: tunedb 1.000 ..." for one problem.
std::string ProgressLine(size_t index, size_t total,
                         const ProblemMeasurement& m);

// The per-group table, then the overall table (per pass and dtype).
void PrintSummaryTables(std::ostream& out,
                        const std::vector<GroupSummary>& summaries);

nlohmann::json MeasurementToJson(const ProblemMeasurement& m);
nlohmann::json SummaryToJson(const GroupSummary& g);
// {"run": ..., "problems": [...], "summaries": [...]}.
nlohmann::json ReportJson(const RunInfo& info,
                          const std::vector<ProblemMeasurement>& measurements,
                          const std::vector<GroupSummary>& summaries);

// One CSV row per problem, with a header row (columns in README.md).
void WriteCsv(std::ostream& out,
              const std::vector<ProblemMeasurement>& measurements);

}  // namespace tunedb::regret

#endif  // TUNEDB_BENCH_REGRET_REGRET_REPORT_H_
