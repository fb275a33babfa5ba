// RegretFlags: the command line of tunedb_regret (parsed with CLI11; `--help`
// lists every flag).
//
// Thread safety: plain values; ParseRegretFlags is reentrant.
#ifndef TUNEDB_BENCH_REGRET_REGRET_FLAGS_H_
#define TUNEDB_BENCH_REGRET_REGRET_FLAGS_H_

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "bench/regret/batch_timer.h"
#include "bench/regret/problem_set.h"
#include "bench/regret/switch_matrix.h"
#include "bench/regret/truth_timer.h"
#include "server/search/cudnn_finder_options.h"
#include "server/search/run_timer.h"

namespace tunedb::regret {

// Exit statuses of tunedb_regret.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  // nothing measured, or the GPU failed
inline constexpr int kExitUsage = 2;   // bad flags or problem input
inline constexpr int kExitSkip = 77;   // no usable GPU (ctest: skipped)

struct RegretFlags {
  ProblemSetSpec problems;
  TruthOptions truth;
  int device = 0;               // CUDA ordinal
  bool preload_find = true;     // RegretContext::preload_find
  SwitchOptions switch_matrix;  // RegretContext::switch_matrix
  // CudnnFinderOptions::retime_start of the search measured.
  DirectStart retime_start = CudnnFinderOptions().retime_start;
  std::string json_path;
  std::string csv_path;
  std::string command_line;  // argv joined, for the report
};

// Parses argv into `flags`. Returns nullopt to go on, or the exit status
// (kExitOk after --help, kExitUsage after a bad flag, with the message on
// `out` or `err`).
std::optional<int> ParseRegretFlags(int argc, const char* const* argv,
                                    RegretFlags* flags, std::ostream& out,
                                    std::ostream& err);

}  // namespace tunedb::regret

#endif  // TUNEDB_BENCH_REGRET_REGRET_FLAGS_H_
