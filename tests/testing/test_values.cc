#include "tests/testing/test_values.h"

#include <string_view>

#include "gtest/gtest.h"

namespace tunedb::testing_util {

DeviceKey TestDevice(const std::string& gpu_model) {
  DeviceKey d;
  d.gpu_model = gpu_model;
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.cudnn_version = 91900;
  d.cuda_runtime_version = 13000;
  return d;
}

ConvProblem TestProblem(int64_t n, int64_t c, int64_t k, int64_t hw,
                        int64_t filter, int64_t stride, int64_t groups) {
  ConvProblem p;
  p.op = ConvOp::kForward;
  p.spatial_dims = 2;
  p.n = n;
  p.c = c;
  p.k = k;
  p.input = {hw, hw, 0};
  p.filter = {filter, filter, 0};
  p.padding = {filter / 2, filter / 2, 0};
  p.stride = {stride, stride, 0};
  p.dilation = {1, 1, 0};
  p.groups = groups;
  p.layout = Layout::kNCHW;
  return p;
}

ConvProblem StemProblem(int64_t n, ConvOp op) {
  ConvProblem p = TestProblem(n, /*c=*/3, /*k=*/64, /*hw=*/224, /*filter=*/7,
                              /*stride=*/2);
  p.op = op;
  return p;
}

ProblemKey TestKey(int64_t n, int64_t c, int64_t k, const DeviceKey& device) {
  return ProblemKey{device, TestProblem(n, c, k)};
}

ProblemKey StemKey(int64_t n, const std::string& gpu_model, ConvOp op) {
  return ProblemKey{TestDevice(gpu_model), StemProblem(n, op)};
}

AlgoResult OkResult(int algo, int64_t workspace_bytes, MathType math) {
  AlgoResult r;
  r.algo = algo;
  r.math_type = math;
  r.status = AlgoStatus::kOk;
  r.launch = {1.0, 0, 3};
  r.gpu = {0.75, 0, 3};
  r.host = {0.25, 0, 3};
  r.workspace_bytes = workspace_bytes;
  r.deterministic = true;
  return r;
}

Record GraphTestRecord(int64_t n) {
  Record record = TestRecord(n);
  record.key.problem.api = ConvApi::kGraph;
  record.key.problem.alignment = 16;
  int engine = 40;
  for (AlgoResult& r : record.results) {
    r.algo = engine++;
    r.knobs = {Knob{3, 2}, Knob{17, int64_t{1} << 33}};
    r.numerical_notes = (uint32_t{1} << kNumericalNoteTensorCore) |
                        (uint32_t{1} << 5);  // winograd
    r.behavior_notes = uint32_t{1} << kBehaviorNoteRuntimeCompilation;
    r.build_ms = 250.5;  // the same for each: the ranking stays the launch time's
  }
  record.results[0].heuristic_rank = 1;
  record.results[0].plan =
      "{\"engine\":40,\"json\":\"with \\\"quotes\\\" and \\u00e9\"}";
  return record;
}

Record TestRecord(int64_t n, const std::string& gpu_model, ConvOp op,
                  int64_t measured_at_us) {
  Record record;
  record.key = StemKey(n, gpu_model, op);
  record.measured_at_us = measured_at_us;
  record.host = "node-7";
  record.gpu_uuid = "GPU-0123abcd";
  record.driver_version = "580.65.06";
  record.finder = "simulated";
  record.repeats = 5;
  record.workspace_cap_bytes = int64_t{1} << 32;
  record.search_ms = 123.25;
  record.verified = true;

  AlgoResult fast;
  fast.algo = 1;
  fast.math_type = MathType::kTensorOp;
  fast.launch = {0.125 + static_cast<double>(n) / 1024, 0.015625, 5};
  fast.gpu = {0.0625, 0.0078125, 9};
  fast.host = {0.03125, 0.001953125, 5};
  fast.workspace_bytes = 1 << 20;
  fast.retimed = true;
  AlgoResult slow;
  slow.algo = 0;
  slow.math_type = MathType::kDefault;
  slow.launch = {2.5, 0.25, 5};
  slow.gpu = {2.25, 0.125, 7};
  slow.host = {0.015625, 0.0009765625, 5};
  slow.deterministic = true;
  AlgoResult unsupported;
  unsupported.algo = 5;
  unsupported.math_type = MathType::kFma;
  unsupported.status = AlgoStatus::kNotSupported;
  AlgoResult failed;
  failed.algo = 6;
  failed.math_type = MathType::kTensorOpAllowConversion;
  failed.status = AlgoStatus::kFailed;
  failed.error = "CUDNN_STATUS_EXECUTION_FAILED: \"launch\" failed";
  record.results = {fast, slow, unsupported, failed};
  return record;
}

Record NegativeRecord(int64_t n) {
  Record record = TestRecord(n);
  record.results.resize(2);
  for (AlgoResult& result : record.results) {
    result.status = AlgoStatus::kNotSupported;
    result.launch = result.gpu = result.host = Timing{};
  }
  return record;
}

void ExpectSameRecord(const Record& actual, const Record& expected) {
  EXPECT_EQ(actual.key.ToText(), expected.key.ToText());
  EXPECT_TRUE(actual.key == expected.key);
  EXPECT_EQ(actual.results, expected.results);
  EXPECT_EQ(actual.measured_at_us, expected.measured_at_us);
  EXPECT_EQ(actual.host, expected.host);
  EXPECT_EQ(actual.gpu_uuid, expected.gpu_uuid);
  EXPECT_EQ(actual.driver_version, expected.driver_version);
  EXPECT_EQ(actual.finder, expected.finder);
  EXPECT_EQ(actual.repeats, expected.repeats);
  EXPECT_EQ(actual.workspace_cap_bytes, expected.workspace_cap_bytes);
  EXPECT_EQ(actual.search_ms, expected.search_ms);
  EXPECT_EQ(actual.verified, expected.verified);
  EXPECT_EQ(actual.revalidated_from_cudnn, expected.revalidated_from_cudnn);
  EXPECT_EQ(actual.revalidated_from_driver, expected.revalidated_from_driver);
}

std::string WithoutPinDigests(std::string pin_text) {
  constexpr std::string_view kDigest = ",\"digest\":\"";
  for (size_t at; (at = pin_text.find(kDigest)) != std::string::npos;) {
    pin_text.erase(at, pin_text.find('"', at + kDigest.size()) + 1 - at);
  }
  return pin_text;
}

}  // namespace tunedb::testing_util
