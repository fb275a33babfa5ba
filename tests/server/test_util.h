// Helpers of the server suites on top of tunedb_testing: problems as the
// wire carries them.
#ifndef TUNEDB_TESTS_SERVER_TEST_UTIL_H_
#define TUNEDB_TESTS_SERVER_TEST_UTIL_H_

#include <cstdint>

#include "proto/convert.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_values.h"
#include "tunedb/v1/tunedb.pb.h"

namespace tunedb::testing_util {

// TestProblem(n, c, k) as a wire message.
inline v1::ConvProblem ProtoProblem(int64_t n, int64_t c = 64, int64_t k = 64) {
  v1::ConvProblem out;
  ToProto(TestProblem(n, c, k), &out);
  return out;
}

}  // namespace tunedb::testing_util

#endif  // TUNEDB_TESTS_SERVER_TEST_UTIL_H_
