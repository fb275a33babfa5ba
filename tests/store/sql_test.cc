// The SQLite layer under the store: statements, transactions, the status
// conversion and the connection pool.
#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/sql/connection_pool.h"
#include "store/sql/database.h"
#include "store/sql/error.h"
#include "store/sql/statement.h"
#include "store/sql/transaction.h"
#include "tests/store/store_test_util.h"

namespace tunedb::sql {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::unique_ptr<Database> Memory() {
  absl::StatusOr<std::unique_ptr<Database>> db =
      Database::Open(":memory:", Database::Mode::kReadWriteCreate, 0);
  EXPECT_TRUE(db.ok()) << db.status();
  EXPECT_TRUE((*db)->Execute("CREATE TABLE t(a INTEGER, b TEXT)").ok());
  return *std::move(db);
}

TEST(StatementTest, BindsStepsAndReadsColumns) {
  auto db = Memory();
  {
    absl::StatusOr<Statement> insert =
        db->GetCachedStatement("INSERT INTO t VALUES(?1, ?2)");
    ASSERT_TRUE(insert.ok()) << insert.status();
    insert->BindInt64(1, int64_t{1} << 40);
    insert->BindText(2, std::string("with\0nul", 8));
    ASSERT_TRUE(insert->Run().ok());
  }
  absl::StatusOr<Statement> select =
      db->GetUniqueStatement("SELECT a, b, NULL FROM t");
  ASSERT_TRUE(select.ok());
  ASSERT_TRUE(select->Step().value_or(false));
  EXPECT_EQ(select->ColumnInt64(0), int64_t{1} << 40);
  EXPECT_EQ(select->ColumnText(1), std::string("with\0nul", 8));
  EXPECT_TRUE(select->ColumnIsNull(2));
  EXPECT_FALSE(select->Step().value_or(true));
}

TEST(StatementTest, CachedStatementIsReusedAndLentOnce) {
  auto db = Memory();
  const char* sql = "INSERT INTO t VALUES(?1, 'x')";
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<Statement> insert = db->GetCachedStatement(sql);
    ASSERT_TRUE(insert.ok()) << insert.status();
    // While one is out, the same statement cannot be lent again.
    EXPECT_EQ(db->GetCachedStatement(sql).status().code(),
              absl::StatusCode::kFailedPrecondition);
    insert->BindInt(1, i);
    ASSERT_TRUE(insert->Run().ok());
  }
  EXPECT_EQ(db->QueryInt64("SELECT SUM(a) FROM t").value_or(-1), 3);
}

TEST(StatementTest, BindErrorIsReportedByStep) {
  auto db = Memory();
  absl::StatusOr<Statement> insert =
      db->GetUniqueStatement("INSERT INTO t VALUES(?1, ?2)");
  ASSERT_TRUE(insert.ok());
  insert->BindInt(3, 1);  // no such parameter
  absl::Status status = insert->Run();
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("parameter 3"));
  EXPECT_EQ(db->QueryInt64("SELECT COUNT(*) FROM t").value_or(-1), 0);
}

TEST(StatementTest, RefusesMultipleStatementsAndBadSql) {
  auto db = Memory();
  EXPECT_EQ(db->GetUniqueStatement("SELECT 1; SELECT 2").status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<Statement> bad = db->GetUniqueStatement("SELECT * FROM nope");
  EXPECT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("no such table: nope"));
  EXPECT_THAT(bad.status().message(), HasSubstr(":memory:"));
}

TEST(TransactionTest, RollsBackUnlessCommitted) {
  auto db = Memory();
  {
    Transaction transaction(db.get(), Transaction::Kind::kImmediate);
    ASSERT_TRUE(transaction.Begin().ok());
    ASSERT_TRUE(db->Execute("INSERT INTO t VALUES(1, 'gone')").ok());
    EXPECT_TRUE(db->InTransaction());
  }
  EXPECT_FALSE(db->InTransaction());
  EXPECT_EQ(db->QueryInt64("SELECT COUNT(*) FROM t").value_or(-1), 0);
  {
    Transaction transaction(db.get(), Transaction::Kind::kImmediate);
    ASSERT_TRUE(transaction.Begin().ok());
    ASSERT_TRUE(db->Execute("INSERT INTO t VALUES(2, 'kept')").ok());
    ASSERT_TRUE(transaction.Commit().ok());
  }
  EXPECT_EQ(db->QueryInt64("SELECT COUNT(*) FROM t").value_or(-1), 1);
  Transaction explicit_rollback(db.get(), Transaction::Kind::kDeferred);
  ASSERT_TRUE(explicit_rollback.Begin().ok());
  ASSERT_TRUE(db->Execute("DELETE FROM t").ok());
  ASSERT_TRUE(explicit_rollback.Rollback().ok());
  EXPECT_EQ(db->QueryInt64("SELECT COUNT(*) FROM t").value_or(-1), 1);
  EXPECT_FALSE(explicit_rollback.Commit().ok());
}

TEST(SqliteStatusTest, MapsCodesOnce) {
  EXPECT_TRUE(SqliteStatus(SQLITE_OK, nullptr, "x").ok());
  EXPECT_TRUE(SqliteStatus(SQLITE_DONE, nullptr, "x").ok());
  EXPECT_EQ(SqliteStatus(SQLITE_CORRUPT, nullptr, "x").code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(SqliteStatus(SQLITE_NOTADB, nullptr, "x").code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(SqliteStatus(SQLITE_BUSY, nullptr, "x").code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(SqliteStatus(SQLITE_BUSY_SNAPSHOT, nullptr, "x").code(),
            absl::StatusCode::kUnavailable);
  // Not RESOURCE_EXHAUSTED, which tells clients to retry later.
  EXPECT_EQ(SqliteStatus(SQLITE_FULL, nullptr, "x").code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(SqliteStatus(SQLITE_NOMEM, nullptr, "x").code(),
            absl::StatusCode::kInternal);
  EXPECT_EQ(SqliteStatus(SQLITE_CONSTRAINT_UNIQUE, nullptr, "x").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SqliteStatus(SQLITE_IOERR_FSYNC, nullptr, "x").code(),
            absl::StatusCode::kInternal);
  EXPECT_THAT(SqliteStatus(SQLITE_FULL, nullptr, "writing").message(),
              HasSubstr("writing: database or disk is full"));
}

// A full TMPDIR fails writes of a database whose disk has room: the message
// names SQLite's temporary folder, not only the database.
TEST(SqliteStatusTest, AFullDiskNamesSqlitesTemporaryFolderAndItsFreeSpace) {
  const std::string dir = ::testing::TempDir();
  const char* before = std::getenv("SQLITE_TMPDIR");
  const std::string saved = before == nullptr ? "" : before;
  setenv("SQLITE_TMPDIR", dir.c_str(), 1);
  const std::string message(
      SqliteStatus(SQLITE_FULL, nullptr, "/data/tunedb.db: INSERT").message());
  if (before == nullptr) {
    unsetenv("SQLITE_TMPDIR");
  } else {
    setenv("SQLITE_TMPDIR", saved.c_str(), 1);
  }
  EXPECT_THAT(message, HasSubstr("database or disk is full"));
  EXPECT_THAT(message, HasSubstr("SQLite's temporary folder " + dir + " ("));
  EXPECT_THAT(message, HasSubstr(" bytes free; SQLITE_TMPDIR or TMPDIR"));
  EXPECT_THAT(std::string(SqliteStatus(SQLITE_BUSY, nullptr, "x").message()),
              Not(HasSubstr("temporary folder")));
}

TEST(ConnectionPoolTest, LendsEachConnectionToOneHolder) {
  std::vector<std::unique_ptr<Database>> connections;
  connections.push_back(Memory());
  connections.push_back(Memory());
  ConnectionPool pool(std::move(connections));
  EXPECT_EQ(pool.size(), 2u);

  std::atomic<int> holders{0};
  std::atomic<int> most{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 20; ++j) {
        ConnectionPool::Lease lease = pool.Acquire();
        const int now = ++holders;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        EXPECT_TRUE(lease->QueryInt64("SELECT 1").ok());
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        --holders;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_LE(most.load(), 2);
  EXPECT_GE(most.load(), 1);
}

}  // namespace
}  // namespace tunedb::sql
