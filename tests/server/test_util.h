// Helpers shared by the core suites: temporary folders, problems, and a
// simulated daemon on a Unix socket.
#ifndef TUNEDB_TESTS_SERVER_TEST_UTIL_H_
#define TUNEDB_TESTS_SERVER_TEST_UTIL_H_

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "proto/convert.h"
#include "tunedb/problem.h"
#include "tunedb/v1/tunedb.pb.h"

namespace tunedb::testing_util {

// A fresh folder under TMPDIR, removed by the destructor. Unix socket paths
// must stay short (108 bytes), so it lives directly under /tmp by default.
class TempDir {
 public:
  TempDir() {
    std::string pattern = "/tmp/tunedb-test-XXXXXX";
    char* made = mkdtemp(pattern.data());
    path_ = made ? made : "/tmp";
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline ConvProblem MakeProblem(int64_t n, int64_t c = 64, int64_t k = 64,
                               int64_t hw = 28) {
  ConvProblem p;
  p.n = n;
  p.c = c;
  p.k = k;
  p.input = {hw, hw, 0};
  p.filter = {3, 3, 0};
  p.padding = {1, 1, 0};
  p.stride = {1, 1, 0};
  p.dilation = {1, 1, 0};
  return p;
}

inline v1::ConvProblem ProtoProblem(int64_t n, int64_t c = 64, int64_t k = 64) {
  v1::ConvProblem out;
  ToProto(MakeProblem(n, c, k), &out);
  return out;
}

}  // namespace tunedb::testing_util

#endif  // TUNEDB_TESTS_SERVER_TEST_UTIL_H_
