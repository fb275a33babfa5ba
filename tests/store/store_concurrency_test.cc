// The store under concurrency: reader threads while a writer thread writes,
// and readers that do not wait for another process's open write transaction.
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "store/sql/database.h"
#include "store/store.h"
#include "tests/store/store_test_util.h"

namespace tunedb::store_test {
namespace {

TEST(StoreConcurrencyTest, ReadersRunWhileAWriterWrites) {
  TempDir dir;
  Store::Options options;
  options.path = dir.File("concurrent.db");
  options.read_connections = 3;
  options.checkpoint_every_writes = 16;
  absl::StatusOr<std::unique_ptr<Store>> opened = Store::Open(options);
  ASSERT_TRUE(opened.ok()) << opened.status();
  Store& store = **opened;

  constexpr int kRecords = 100;
  std::atomic<int> written{0};
  std::atomic<int> write_errors{0};
  std::atomic<int> read_errors{0};
  std::atomic<int> missing{0};
  std::atomic<int> reads{0};

  std::thread writer([&] {
    for (int n = 1; n <= kRecords; ++n) {
      if (!store.Put(TestRecord(n)).ok()) ++write_errors;
      written.store(n);
    }
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < 4; ++r) {
    readers.emplace_back([&, r] {
      int i = r;
      int last_count = 0;
      while (written.load() < kRecords) {
        const int acknowledged = written.load();
        if (acknowledged == 0) continue;
        const int n = 1 + (i++ % acknowledged);
        absl::StatusOr<std::optional<Record>> got = store.Get(StemKey(n));
        if (!got.ok()) {
          ++read_errors;
        } else if (!got->has_value() || (*got)->results.size() != 4) {
          ++missing;
        }
        absl::StatusOr<int64_t> count = store.Count();
        if (!count.ok() || *count < acknowledged || *count < last_count) {
          ++read_errors;
        } else {
          last_count = static_cast<int>(*count);
        }
        ++reads;
      }
    });
  }
  writer.join();
  for (std::thread& reader : readers) reader.join();

  EXPECT_EQ(write_errors.load(), 0);
  EXPECT_EQ(read_errors.load(), 0);
  EXPECT_EQ(missing.load(), 0);
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(store.Count().value_or(-1), kRecords);
  EXPECT_TRUE(store.QuickCheck().ok());
}

TEST(StoreConcurrencyTest, ReadersDoNotWaitForAnotherWritersTransaction) {
  TempDir dir;
  Store::Options options;
  options.path = dir.File("locked.db");
  options.busy_timeout_ms = 3000;
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(options);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->Put(TestRecord(1)).ok());

  // Another process (here: another connection) holds the write lock.
  absl::StatusOr<std::unique_ptr<sql::Database>> other =
      sql::Database::Open(options.path, sql::Database::Mode::kReadWrite, 0);
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_TRUE((*other)->Execute("BEGIN IMMEDIATE").ok());
  ASSERT_TRUE((*other)->Execute("UPDATE records SET host = 'changed'").ok());

  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::optional<Record>> got = (*store)->Get(StemKey(1));
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->host, "node-7");  // the uncommitted change is invisible
  EXPECT_EQ((*store)->Count().value_or(-1), 1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));

  // A writer with a short busy timeout gives up with UNAVAILABLE; opening an
  // up-to-date file needs no write lock.
  Store::Options impatient = options;
  impatient.busy_timeout_ms = 50;
  absl::StatusOr<std::unique_ptr<Store>> second = Store::Open(impatient);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ((*second)->Put(TestRecord(2)).status().code(),
            absl::StatusCode::kUnavailable);

  ASSERT_TRUE((*other)->Execute("COMMIT").ok());
  EXPECT_EQ((*store)->Get(StemKey(1))->value().host, "changed");
  EXPECT_TRUE((*second)->Put(TestRecord(2)).ok());
}

TEST(StoreConcurrencyTest, StoresOpeningANewFileAtOnceCreateItOnce) {
  TempDir dir;
  Store::Options options;
  options.path = dir.File("race.db");
  constexpr int kOpeners = 4;
  std::vector<absl::StatusOr<std::unique_ptr<Store>>> stores(kOpeners);
  std::vector<absl::Status> puts(kOpeners);
  std::vector<std::thread> threads;
  for (int i = 0; i < kOpeners; ++i) {
    threads.emplace_back([&, i] {
      stores[i] = Store::Open(options);
      if (stores[i].ok())
        puts[i] = (*stores[i])->Put(TestRecord(i + 1)).status();
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int i = 0; i < kOpeners; ++i) {
    ASSERT_TRUE(stores[i].ok()) << stores[i].status();
    EXPECT_TRUE(puts[i].ok()) << puts[i];
    EXPECT_EQ((*stores[i])->Count().value_or(-1), kOpeners);
  }
}

}  // namespace
}  // namespace tunedb::store_test
