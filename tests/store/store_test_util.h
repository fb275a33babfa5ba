// The store suites' short names for the shared test values and folders
// (tests/testing/). StemKey(n, gpu, op) is the key of TestRecord(n, gpu, op).
#ifndef TUNEDB_TESTS_STORE_STORE_TEST_UTIL_H_
#define TUNEDB_TESTS_STORE_STORE_TEST_UTIL_H_

#include "tests/testing/temp_dir.h"
#include "tests/testing/test_values.h"

namespace tunedb::store_test {

using testing_util::ExpectSameRecord;
using testing_util::NegativeRecord;
using testing_util::StemKey;
using testing_util::TempDir;
using testing_util::TestRecord;

}  // namespace tunedb::store_test

#endif  // TUNEDB_TESTS_STORE_STORE_TEST_UTIL_H_
