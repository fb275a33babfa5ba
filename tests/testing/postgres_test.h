// PostgresTest: a gtest fixture whose suite shares one PostgresServer
// (started once per test program) and gives each test a fresh database.
// Tests skip, with the reason, only where PostgreSQL's server programs are
// not installed; a server that fails to start fails them.
//
// Thread safety: gtest's fixture rules (one test thread).
#ifndef TUNEDB_TESTS_TESTING_POSTGRES_TEST_H_
#define TUNEDB_TESTS_TESTING_POSTGRES_TEST_H_

#include <string>

#include "gtest/gtest.h"
#include "tests/testing/postgres_server.h"
#include "tests/testing/temp_dir.h"

namespace tunedb::testing_util {

class PostgresTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite();
  static void TearDownTestSuite();
  // Skips or fails as above, restarts a server a test stopped, and creates
  // db_ (named after a counter) with its URL in url_.
  void SetUp() override;

  // An integer the query returns (a test failure otherwise).
  int64_t SqlInt(const std::string& sql);

  static PostgresServer* server() { return server_; }

  std::string db_;
  std::string url_;

 private:
  static inline TempDir* dir_ = nullptr;
  static inline PostgresServer* server_ = nullptr;
  static inline std::string skip_reason_;
  static inline std::string start_error_;
  static inline int databases_ = 0;
};

}  // namespace tunedb::testing_util

#endif  // TUNEDB_TESTS_TESTING_POSTGRES_TEST_H_
