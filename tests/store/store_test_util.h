// The store suites' short names for the shared test values and folders
// (tests/testing/), and the helpers their fixtures share. StemKey(n, gpu,
// op) is the key of TestRecord(n, gpu, op).
#ifndef TUNEDB_TESTS_STORE_STORE_TEST_UTIL_H_
#define TUNEDB_TESTS_STORE_STORE_TEST_UTIL_H_

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "store/store.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_values.h"

namespace tunedb::store_test {

using testing_util::ExpectSameRecord;
using testing_util::GraphTestRecord;
using testing_util::NegativeRecord;
using testing_util::StemKey;
using testing_util::TempDir;
using testing_util::TestRecord;

// Puts `record`; its row id, or 0 after a (reported) failure.
inline int64_t MustPut(Store& store, const Record& record) {
  absl::StatusOr<int64_t> id = store.Put(record);
  EXPECT_TRUE(id.ok()) << id.status();
  return id.value_or(0);
}

// The ids Store::Query visits for these arguments, in order.
inline std::vector<int64_t> QueryIds(Store& store, const RecordFilter& filter,
                                     int64_t after_id = 0, int limit = 0) {
  std::vector<int64_t> ids;
  absl::Status status =
      store.Query(filter, after_id, limit, [&](const Record& record) {
        ids.push_back(record.id);
        return true;
      });
  EXPECT_TRUE(status.ok()) << status;
  return ids;
}

}  // namespace tunedb::store_test

#endif  // TUNEDB_TESTS_STORE_STORE_TEST_UTIL_H_
