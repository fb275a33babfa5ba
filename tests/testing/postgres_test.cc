#include "tests/testing/postgres_test.h"

#include "absl/strings/numbers.h"

namespace tunedb::testing_util {

void PostgresTest::SetUpTestSuite() {
  if (PostgresServer::BinDir(&skip_reason_).empty()) return;
  dir_ = new TempDir();
  server_ = new PostgresServer(dir_->path());
  std::string error;
  if (!server_->Start(&error)) start_error_ = error;
}

void PostgresTest::TearDownTestSuite() {
  delete server_;
  server_ = nullptr;
  delete dir_;
  dir_ = nullptr;
}

void PostgresTest::SetUp() {
  if (server_ == nullptr) GTEST_SKIP() << skip_reason_;
  ASSERT_EQ(start_error_, "");
  if (!server_->running()) {
    std::string error;
    ASSERT_TRUE(server_->Start(&error)) << error;
  }
  db_ = "test_" + std::to_string(++databases_);
  url_ = server_->CreateDatabase(db_);
}

int64_t PostgresTest::SqlInt(const std::string& sql) {
  int64_t value = -1;
  const std::string out = server_->Sql(db_, sql);
  EXPECT_TRUE(absl::SimpleAtoi(out, &value)) << sql << ": " << out;
  return value;
}

}  // namespace tunedb::testing_util
