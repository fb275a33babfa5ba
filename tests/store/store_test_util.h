// The store suites' short names for the shared test values and folders
// (tests/testing/), the helpers their fixtures share, and FileStoreTest: a
// store on a file that a test reopens and changes behind its back. StemKey(n, gpu,
// op) is the key of TestRecord(n, gpu, op).
#ifndef TUNEDB_TESTS_STORE_STORE_TEST_UTIL_H_
#define TUNEDB_TESTS_STORE_STORE_TEST_UTIL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "store/sql/database.h"
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

// A store on a file of a fresh folder (`file`, opened by SetUp), reopened
// as the daemon would reopen it, and changed behind its back through a
// second connection, as another program would.
class FileStoreTest : public ::testing::Test {
 protected:
  explicit FileStoreTest(std::string file) : path_(dir_.File(file)) {}

  void SetUp() override { Reopen(); }

  void Reopen() {
    store_.reset();
    Store::Options options;
    options.path = path_;
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  // Runs `sql` on a second connection.
  void Execute(const std::string& sql) {
    auto db = sql::Database::Open(path_, sql::Database::Mode::kReadWrite, 5000);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE((*db)->Execute(sql).ok()) << sql;
  }

  TempDir dir_;
  const std::string path_;
  std::unique_ptr<Store> store_;
};

}  // namespace tunedb::store_test

#endif  // TUNEDB_TESTS_STORE_STORE_TEST_UTIL_H_
