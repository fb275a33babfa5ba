// The Lookups programs made, as the store keeps them (program_keys): rows
// merged by their later time, read newest first per program and device,
// each program cut to its newest keys, totals, and whole programs
// forgotten; kept across a reopen of the file.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "store/store.h"
#include "tests/store/store_test_util.h"

namespace tunedb::store_test {
namespace {

// The requests of `rows`, in order.
std::vector<std::string> Requests(const std::vector<ProgramKey>& rows) {
  std::vector<std::string> out;
  for (const ProgramKey& row : rows) out.push_back(row.request);
  return out;
}

std::unique_ptr<Store> OpenAt(const std::string& path) {
  Store::Options options;
  options.path = path;
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(options);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? std::move(*store) : nullptr;
}

TEST(ProgramKeysStoreTest, RowsAreReadNewestFirstPerProgramAndDevice) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenAt(dir.File("t.db"));
  ASSERT_NE(store, nullptr);
  // A request is bytes, NUL and non-UTF-8 included.
  const std::string binary("\x00\xff\x10z", 4);
  ASSERT_TRUE(store
                  ->PutProgramKeys({{"p", "gpu-a", "old", 10},
                                    {"p", "gpu-a", binary, 30},
                                    {"p", "gpu-a", "mid", 20},
                                    {"p", "gpu-b", "other-device", 40},
                                    {"q", "gpu-a", "other-program", 50}},
                                   100)
                  .ok());
  auto rows = store->ReadProgramKeys("p", "gpu-a", 0);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(Requests(*rows), (std::vector<std::string>{binary, "mid", "old"}));
  EXPECT_EQ((*rows)[0].last_asked_us, 30);
  rows = store->ReadProgramKeys("p", "gpu-a", 2);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(Requests(*rows), (std::vector<std::string>{binary, "mid"}));
  rows = store->ReadProgramKeys("unknown", "gpu-a", 0);
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->empty());
}

TEST(ProgramKeysStoreTest, ARowAskedAgainKeepsTheLaterTimeAndSurvivesReopen) {
  TempDir dir;
  const std::string path = dir.File("t.db");
  {
    std::unique_ptr<Store> store = OpenAt(path);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->PutProgramKeys({{"p", "d", "a", 50}}, 100).ok());
    // An older time does not move it back; a newer one moves it forward.
    ASSERT_TRUE(store->PutProgramKeys({{"p", "d", "a", 10}}, 100).ok());
    ASSERT_TRUE(store->PutProgramKeys({{"p", "d", "b", 60}}, 100).ok());
    ASSERT_TRUE(store->PutProgramKeys({{"p", "d", "a", 70}}, 100).ok());
  }
  std::unique_ptr<Store> store = OpenAt(path);
  ASSERT_NE(store, nullptr);
  auto rows = store->ReadProgramKeys("p", "d", 0);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(Requests(*rows), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ((*rows)[0].last_asked_us, 70);
}

TEST(ProgramKeysStoreTest, AProgramKeepsItsNewestKeysAndReportsItsTotals) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenAt(dir.File("t.db"));
  ASSERT_NE(store, nullptr);
  std::vector<ProgramKey> rows;
  for (int i = 1; i <= 5; ++i) {
    rows.push_back({"p", i % 2 ? "d1" : "d2", "key" + std::to_string(i), i});
  }
  rows.push_back({"q", "d1", "q-key", 3});
  auto totals = store->PutProgramKeys(rows, 3);
  ASSERT_TRUE(totals.ok()) << totals.status();
  ASSERT_EQ(totals->size(), 2u);
  EXPECT_EQ((*totals)[0].program, "p");
  EXPECT_EQ((*totals)[0].keys, 3);
  EXPECT_EQ((*totals)[0].bytes, 3 * 4);
  EXPECT_EQ((*totals)[0].last_asked_us, 5);
  EXPECT_EQ((*totals)[1].keys, 1);
  // key1 and key2, the oldest, are gone, from both devices.
  auto d1 = store->ReadProgramKeys("p", "d1", 0);
  auto d2 = store->ReadProgramKeys("p", "d2", 0);
  ASSERT_TRUE(d1.ok() && d2.ok());
  EXPECT_EQ(Requests(*d1), (std::vector<std::string>{"key5", "key3"}));
  EXPECT_EQ(Requests(*d2), (std::vector<std::string>{"key4"}));

  auto all = store->ProgramKeyTotals();
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[1].program, "q");
  EXPECT_EQ((*all)[1].bytes, 5);

  ASSERT_TRUE(store->ForgetPrograms({"p"}).ok());
  all = store->ProgramKeyTotals();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].program, "q");
}

}  // namespace
}  // namespace tunedb::store_test
