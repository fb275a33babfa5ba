// SyntheticRecord: made-up records for the report's tests and its scale
// test: distinct problems on two GPU models and two cuDNN versions, four
// ranked results each, served counts, search times and measurement days
// spread over two months.
//
// Thread safety: pure function.
#ifndef TUNEDB_TESTS_TUNER_REPORT_RECORDS_H_
#define TUNEDB_TESTS_TUNER_REPORT_RECORDS_H_

#include <cstdint>

#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb::tuner {

inline AlgoResult SyntheticResult(int algo, double ms, int64_t workspace,
                                  int heuristic_rank) {
  AlgoResult a;
  a.algo = algo;
  a.math_type = MathType::kTensorOp;
  a.launch.median_ms = ms;
  a.gpu.median_ms = ms;
  a.workspace_bytes = workspace;
  a.heuristic_rank = heuristic_rank;
  return a;
}

// Record `i` (its id is i + 1): a distinct problem for each i.
inline Record SyntheticRecord(int64_t i) {
  Record r;
  r.id = i + 1;
  r.key.device.gpu_model = i % 2 == 0 ? "NVIDIA H100" : "NVIDIA H200";
  r.key.device.cc_major = 9;
  r.key.device.sm_count = 132;
  r.key.device.cudnn_version = i % 5 == 0 ? 91400 : 91900;
  r.key.device.cuda_runtime_version = 13000;
  ConvProblem& p = r.key.problem;
  p.n = 1 + i % 64;
  p.c = 16 * (1 + (i / 64) % 32);
  p.k = 16 * (1 + (i / 2048) % 32);
  p.input = {8 + (i / 65536) % 512, 8 + (i / 65536) % 512, 0};
  p.filter = {3, 3, 0};
  p.padding = {1, 1, 0};
  p.stride = {1, 1, 0};
  p.dilation = {1, 1, 0};
  const double base = 0.05 + 0.001 * static_cast<double>(i % 997);
  const int64_t ws = int64_t{1} << (10 + i % 21);
  // The fastest is the heuristic's first choice for every third record.
  const int first_rank = i % 3 == 0 ? 1 : 2 + static_cast<int>(i % 9);
  r.results = {SyntheticResult(1, base, ws, first_rank),
               SyntheticResult(0, base * (1.05 + 0.01 * (i % 150)), 0,
                               first_rank == 1 ? 2 : 1),
               SyntheticResult(6, base * 2.5, ws / 2, 3),
               SyntheticResult(7, base * 3.5, 0, 0)};
  r.measured_at_us = int64_t{1767225600} * 1000000 +
                     (i % 60) * int64_t{86400} * 1000000 + i;
  r.finder = "simulated";
  r.search_ms = 50 + static_cast<double>(i % 400);
  r.served_count = i % 11;
  return r;
}

}  // namespace tunedb::tuner

#endif  // TUNEDB_TESTS_TUNER_REPORT_RECORDS_H_
