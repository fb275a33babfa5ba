// Valid domain values for tests: devices, problems, keys, algorithm results
// and records, built one way for every suite, and a record comparison.
//
//   ProblemKey key = TestKey(8);              // a small 3x3 conv
//   Record record = TestRecord(1);            // the ResNet-50 stem, ranked
//   ExpectSameRecord(*stored, record);
//
// Every builder returns a value that passes Validate(); arguments that make
// it invalid (n < 1, say) are the caller's business.
//
// Thread safety: stateless functions.
#ifndef TUNEDB_TESTS_TESTING_TEST_VALUES_H_
#define TUNEDB_TESTS_TESTING_TEST_VALUES_H_

#include <cstdint>
#include <string>

#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb::testing_util {

// The GPU model of TestDevice() (and of the simulated finder's devices).
inline constexpr char kTestGpu[] = "Simulated GPU";

// `gpu_model` with compute capability 9.0, 132 SMs, cuDNN 9.19.0, CUDA 13.0.
DeviceKey TestDevice(const std::string& gpu_model = kTestGpu);

// A forward, f32, NCHW, 2-D cross-correlation: batch n, c input and k output
// channels, an hw x hw input, a filter x filter kernel with "same" padding
// (filter / 2), the given stride, no dilation, `groups` groups.
ConvProblem TestProblem(int64_t n, int64_t c = 64, int64_t k = 64,
                        int64_t hw = 28, int64_t filter = 3, int64_t stride = 1,
                        int64_t groups = 1);

// The ResNet-50 stem (c=3, k=64, 224x224, 7x7 stride 2) with batch n.
ConvProblem StemProblem(int64_t n = 64, ConvOp op = ConvOp::kForward);

// TestProblem(n, c, k) on `device`.
ProblemKey TestKey(int64_t n, int64_t c = 64, int64_t k = 64,
                   const DeviceKey& device = TestDevice());

// StemProblem(n, op) on TestDevice(gpu_model).
ProblemKey StemKey(int64_t n = 64, const std::string& gpu_model = kTestGpu,
                   ConvOp op = ConvOp::kForward);

// An OK, deterministic result: 1 ms median over 3 samples.
AlgoResult OkResult(int algo, int64_t workspace_bytes = 0,
                    MathType math = MathType::kDefault);

// A record of StemKey(n, gpu_model, op) with every field set and a ranking
// of four results: two OK (the faster one depends on n), one not
// supported, one failed.
Record TestRecord(int64_t n, const std::string& gpu_model = kTestGpu,
                  ConvOp op = ConvOp::kForward,
                  int64_t measured_at_us = 1'700'000'000'000'000);

// TestRecord(n) as a graph-API record (api=graph, align=16): its results
// are engine configs with knobs, notes and a build time, the leader ranked
// first by the heuristic and with a plan blob.
Record GraphTestRecord(int64_t n);

// A stored negative answer: TestRecord(n) whose two results did not run.
Record NegativeRecord(int64_t n);

// Expects every stored field equal, except id and served_count.
void ExpectSameRecord(const Record& actual, const Record& expected);

// A pin's text (common/pin_file.h) with every answer's digest taken out, as
// pins were written before answers carried digests.
std::string WithoutPinDigests(std::string pin_text);

}  // namespace tunedb::testing_util

#endif  // TUNEDB_TESTS_TESTING_TEST_VALUES_H_
