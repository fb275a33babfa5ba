// Shared helpers of the store suite: test keys and records, a temporary
// directory, and a record comparison.
//
// Thread safety: plain functions; TempDir is owned by one test.
#ifndef TUNEDB_TESTS_STORE_STORE_TEST_UTIL_H_
#define TUNEDB_TESTS_STORE_STORE_TEST_UTIL_H_

#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb::store_test {

inline constexpr char kBaseKeyText[] =
    "kv=1 gpu=Simulated%20GPU cc=9.0 sms=132 cudnn=9.19.0 cuda=13.0 op=fwd "
    "n=64 c=3 k=64 in=224x224 filt=7x7 pad=3x3 stride=2x2 dil=1x1 groups=1 "
    "mode=xcorr in_type=f32 out_type=f32 compute=f32 layout=nchw tc=1 tf32=1";

// A valid key; `n` (>= 1) makes it unique.
inline ProblemKey TestKey(int64_t n, const std::string& gpu = "Simulated GPU",
                          ConvOp op = ConvOp::kForward) {
  absl::StatusOr<ProblemKey> key = ProblemKey::Parse(kBaseKeyText);
  EXPECT_TRUE(key.ok()) << key.status();
  ProblemKey out = key.ok() ? *key : ProblemKey();
  out.problem.n = n;
  out.problem.op = op;
  out.device.gpu_model = gpu;
  return out;
}

// A record with every field set and a ranking of four results: two OK, one
// not supported, one failed.
inline Record TestRecord(int64_t n, const std::string& gpu = "Simulated GPU",
                         ConvOp op = ConvOp::kForward,
                         int64_t measured_at_us = 1'700'000'000'000'000) {
  Record record;
  record.key = TestKey(n, gpu, op);
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
  fast.launch.median_ms = 0.125 + static_cast<double>(n) / 1024;
  fast.launch.spread_ms = 0.015625;
  fast.launch.samples = 5;
  fast.gpu = {0.0625, 0.0078125, 9};
  fast.host = {0.03125, 0.001953125, 5};
  fast.workspace_bytes = 1 << 20;
  fast.retimed = true;
  AlgoResult slow;
  slow.algo = 0;
  slow.math_type = MathType::kDefault;
  slow.launch.median_ms = 2.5;
  slow.launch.spread_ms = 0.25;
  slow.launch.samples = 5;
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

// A stored negative answer: nothing ran.
inline Record NegativeRecord(int64_t n) {
  Record record = TestRecord(n);
  record.results.resize(2);
  for (AlgoResult& result : record.results) {
    result.status = AlgoStatus::kNotSupported;
    result.launch = result.gpu = result.host = Timing{};
  }
  return record;
}

// Every stored field except id and served_count.
inline void ExpectSameRecord(const Record& actual, const Record& expected) {
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
}

// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class TempDir {
 public:
  TempDir() {
    const char* base = getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr ? base : "/tmp") +
                          "/tunedb_store_test_XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      ADD_FAILURE() << "mkdtemp failed for " << pattern;
    }
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace tunedb::store_test

#endif  // TUNEDB_TESTS_STORE_STORE_TEST_UTIL_H_
