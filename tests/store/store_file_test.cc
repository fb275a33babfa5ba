// The store on a file: persistence, pragmas, migration, refusing files it
// must not touch (another application's, a newer schema, corrupt ones),
// read-only opening and old key-format rows.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/sql/database.h"
#include "store/sql/store_schema.h"
#include "store/record_json.h"
#include "store/store.h"
#include "tests/store/store_test_util.h"

namespace tunedb::store_test {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// Schema version 1 as an older tunedb wrote it.
constexpr char kSchemaV1[] = R"sql(
CREATE TABLE records(
  id INTEGER PRIMARY KEY,
  key_version INTEGER NOT NULL,
  key_hash INTEGER NOT NULL,
  key_text TEXT NOT NULL UNIQUE,
  gpu_model TEXT NOT NULL,
  cudnn_version INTEGER NOT NULL,
  op TEXT NOT NULL,
  measured_at_us INTEGER NOT NULL,
  host TEXT NOT NULL,
  gpu_uuid TEXT NOT NULL,
  driver_version TEXT NOT NULL,
  finder TEXT NOT NULL,
  repeats INTEGER NOT NULL,
  workspace_cap_bytes INTEGER NOT NULL,
  search_ms REAL NOT NULL,
  verified INTEGER NOT NULL);
CREATE INDEX records_by_key_hash ON records(key_hash);
CREATE TABLE results(
  record_id INTEGER NOT NULL REFERENCES records(id) ON DELETE CASCADE,
  rank INTEGER NOT NULL,
  algo INTEGER NOT NULL,
  math_type TEXT NOT NULL,
  status TEXT NOT NULL,
  median_ms REAL NOT NULL,
  spread_ms REAL NOT NULL,
  samples INTEGER NOT NULL,
  workspace_bytes INTEGER NOT NULL,
  deterministic INTEGER NOT NULL,
  retimed INTEGER NOT NULL,
  error TEXT NOT NULL,
  PRIMARY KEY(record_id, rank)) WITHOUT ROWID;
)sql";

std::unique_ptr<sql::Database> Raw(const std::string& path) {
  absl::StatusOr<std::unique_ptr<sql::Database>> db = sql::Database::Open(
      path, sql::Database::Mode::kReadWriteCreate, /*busy_timeout_ms=*/2000);
  EXPECT_TRUE(db.ok()) << db.status();
  return db.ok() ? *std::move(db) : nullptr;
}

int64_t RawInt(const std::string& path, const std::string& sql) {
  auto db = Raw(path);
  absl::StatusOr<int64_t> value = db->QueryInt64(sql);
  EXPECT_TRUE(value.ok()) << value.status();
  return value.value_or(-1);
}

std::string RawText(const std::string& path, const std::string& sql,
                    int column = 0) {
  auto db = Raw(path);
  absl::StatusOr<sql::Statement> statement = db->GetUniqueStatement(sql);
  EXPECT_TRUE(statement.ok()) << statement.status();
  if (!statement.ok() || !statement->Step().value_or(false)) return "";
  return statement->ColumnText(column);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

int64_t FileSize(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : -1;
}

class StoreFileTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::unique_ptr<Store>> Open(bool read_only = false) {
    Store::Options options;
    options.path = path_;
    options.read_only = read_only;
    options.busy_timeout_ms = 2000;
    return Store::Open(options);
  }

  std::unique_ptr<Store> MustOpen(bool read_only = false) {
    absl::StatusOr<std::unique_ptr<Store>> store = Open(read_only);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }

  // A closed store file holding records n = 1..count.
  void MakeStore(int count) {
    auto store = MustOpen();
    ASSERT_NE(store, nullptr);
    std::vector<Record> records;
    for (int n = 1; n <= count; ++n) records.push_back(TestRecord(n));
    ASSERT_TRUE(store->PutAll(records).ok());
  }

  // The store reopened after `record` was stored and the file was taken
  // back to an older schema by `downgrade` (SQL), and the record as it
  // reads there now; null where any step failed (reported).
  std::unique_ptr<Store> MigratedWith(const Record& record,
                                      const std::string& downgrade,
                                      std::optional<Record>* got) {
    {
      auto store = MustOpen();
      if (store == nullptr || !store->Put(record).ok()) {
        ADD_FAILURE() << "could not store the record";
        return nullptr;
      }
    }
    if (!Raw(path_)->Execute(downgrade).ok()) {
      ADD_FAILURE() << "could not take the file back: " << downgrade;
      return nullptr;
    }
    auto store = MustOpen();
    if (store == nullptr) return nullptr;
    EXPECT_EQ(RawInt(path_, "PRAGMA user_version"), kStoreSchemaVersion);
    absl::StatusOr<std::optional<Record>> read = store->Get(record.key);
    if (!read.ok() || !read->has_value()) {
      ADD_FAILURE() << "the migrated record cannot be read: " << read.status();
      return nullptr;
    }
    *got = **std::move(read);
    return store;
  }

  TempDir dir_;
  const std::string path_ = dir_.File("tunedb.db");
};

TEST_F(StoreFileTest, RecordsPersistAcrossReopen) {
  const Record record = TestRecord(42);
  int64_t id = 0;
  {
    auto store = MustOpen();
    ASSERT_NE(store, nullptr);
    id = store->Put(record).value_or(0);
    ASSERT_TRUE(store->AddServed({{id, 3}}).ok());
  }
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  absl::StatusOr<std::optional<Record>> got = store->Get(record.key);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->id, id);
  EXPECT_EQ((*got)->served_count, 3);
  ExpectSameRecord(**got, record);
  EXPECT_EQ(store->path(), path_);
}

TEST_F(StoreFileTest, NewFileHasTunedbIdentityWalAndIndexes) {
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Put(TestRecord(1)).ok());
  EXPECT_EQ(RawInt(path_, "PRAGMA application_id"), kStoreApplicationId);
  EXPECT_EQ(RawInt(path_, "PRAGMA user_version"), kStoreSchemaVersion);
  EXPECT_EQ(RawText(path_, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(RawInt(path_,
                   "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'index' "
                   "AND name IN ('records_by_key_hash', "
                   "'records_by_measured_at')"),
            2);
  // The stored hash is the key's 64-bit FNV hash as a signed integer.
  EXPECT_EQ(RawInt(path_, "SELECT key_hash FROM records"),
            static_cast<int64_t>(StemKey(1).Hash()));
  // A point lookup by hash is an index search, not a scan.
  EXPECT_THAT(RawText(path_,
                      "EXPLAIN QUERY PLAN SELECT id FROM records "
                      "WHERE key_hash = 5",
                      /*column=*/3),
              AllOf(HasSubstr("SEARCH records"),
                    HasSubstr("INDEX records_by_key_hash")));
}

// The database file, its WAL and its shared-memory file follow the daemon
// socket's policy (owner and group, 0660), whatever the umask; a file that
// exists keeps the mode its owner gave it.
TEST_F(StoreFileTest, ANewFileAndItsWalAreOwnerAndGroupOnlyWhateverTheUmask) {
  const mode_t old_umask = umask(022);
  auto store = MustOpen();
  umask(old_umask);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Put(TestRecord(1)).ok());
  for (const std::string& file : {path_, path_ + "-wal", path_ + "-shm"}) {
    struct stat st;
    ASSERT_EQ(stat(file.c_str(), &st), 0) << file;
    EXPECT_EQ(st.st_mode & 0777, 0660u) << file;
  }
  store.reset();
  ASSERT_EQ(chmod(path_.c_str(), 0600), 0);
  store = MustOpen();
  ASSERT_NE(store, nullptr);
  struct stat st;
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(StoreFileTest, CheckpointTruncatesTheWal) {
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  for (int n = 1; n <= 20; ++n) ASSERT_TRUE(store->Put(TestRecord(n)).ok());
  EXPECT_GT(FileSize(path_ + "-wal"), 0);
  ASSERT_TRUE(store->Checkpoint().ok());
  EXPECT_EQ(FileSize(path_ + "-wal"), 0);
  EXPECT_EQ(store->Count().value_or(-1), 20);
}

TEST_F(StoreFileTest, PeriodicCheckpointKeepsTheWalSmall) {
  Store::Options options;
  options.path = path_;
  options.checkpoint_every_writes = 1;
  options.synchronous = "NORMAL";
  auto store = Store::Open(options);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->Put(TestRecord(1)).ok());
  const int64_t wal_after_one = FileSize(path_ + "-wal");
  // With a checkpoint after every write, the WAL is rewritten from its start
  // instead of growing: many more writes leave it about as large.
  for (int n = 2; n <= 40; ++n) ASSERT_TRUE((*store)->Put(TestRecord(n)).ok());
  EXPECT_LE(FileSize(path_ + "-wal"), 4 * wal_after_one);

  Store::Options rarely = options;
  rarely.path = dir_.File("rarely.db");
  rarely.checkpoint_every_writes = 1000000;
  auto other = Store::Open(rarely);
  ASSERT_TRUE(other.ok()) << other.status();
  for (int n = 1; n <= 40; ++n) ASSERT_TRUE((*other)->Put(TestRecord(n)).ok());
  EXPECT_GT(FileSize(rarely.path + "-wal"), FileSize(path_ + "-wal"));
}

TEST_F(StoreFileTest, MigratesAVersion1File) {
  {
    auto db = Raw(path_);
    ASSERT_TRUE(db->Execute(kSchemaV1).ok());
    const Record record = TestRecord(11);
    ASSERT_TRUE(
        db->Execute(absl::StrCat(
                        "INSERT INTO records VALUES(7, 1, ",
                        static_cast<int64_t>(record.key.Hash()), ", '",
                        record.key.ToText(),
                        "', 'Simulated GPU', 91900, 'fwd', 1700000000000000,"
                        " 'node-7', 'GPU-0123abcd', '580.65.06', 'simulated',"
                        " 5, 4294967296, 123.25, 1);"
                        "INSERT INTO results VALUES(7, 0, 1, 'tensor_op', 'ok',"
                        " 0.25, 0.015625, 5, 1048576, 0, 1, '');"
                        "PRAGMA user_version = 1;"
                        "PRAGMA application_id = ",
                        kStoreApplicationId))
            .ok());
  }
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(RawInt(path_, "PRAGMA user_version"), kStoreSchemaVersion);
  absl::StatusOr<std::optional<Record>> got = store->Get(StemKey(11));
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->id, 7);
  EXPECT_EQ((*got)->served_count, 0);
  EXPECT_EQ((*got)->host, "node-7");
  ASSERT_EQ((*got)->results.size(), 1u);
  EXPECT_EQ((*got)->results[0].math_type, MathType::kTensorOp);
  // Its one time was GPU time; launch time is unmeasured, so the record is
  // stale (served, re-searched by the next Tune).
  EXPECT_EQ((*got)->results[0].gpu.median_ms, 0.25);
  EXPECT_EQ((*got)->results[0].gpu.samples, 5);
  EXPECT_FALSE((*got)->results[0].launch.measured());
  EXPECT_TRUE((*got)->stale());
  ASSERT_TRUE(store->AddServed({{7, 2}}).ok());
  EXPECT_EQ(store->Get(StemKey(11))->value().served_count, 2);
  RecordFilter recent;
  recent.since_us = 1;
  int seen = 0;
  ASSERT_TRUE(store
                  ->Query(recent, 0, 0,
                          [&](const Record&) {
                            ++seen;
                            return true;
                          })
                  .ok());
  EXPECT_EQ(seen, 1);
}

TEST_F(StoreFileTest, AVersion7FileKeepsItsResultsWithoutBuildTimesOrRanks) {
  const Record graph = GraphTestRecord(1);
  std::optional<Record> migrated;
  auto store = MigratedWith(graph,
                            "ALTER TABLE results DROP COLUMN build_ms;"
                            "ALTER TABLE results DROP COLUMN heuristic_rank;"
                            "ALTER TABLE records DROP COLUMN revalidated_from;"
                            "ALTER TABLE records DROP COLUMN "
                            "revalidated_from_driver;"
                            "PRAGMA user_version = 7;",
                            &migrated);
  ASSERT_NE(store, nullptr);
  ASSERT_EQ(migrated->results.size(), graph.results.size());
  for (size_t i = 0; i < graph.results.size(); ++i) {
    // Unknown (0) after the migration; everything else as stored.
    AlgoResult expected = graph.results[i];
    expected.build_ms = 0;
    expected.heuristic_rank = 0;
    EXPECT_EQ(migrated->results[i], expected) << i;
  }
  // A new Put stores them.
  ASSERT_TRUE(store->Put(graph).ok());
  absl::StatusOr<std::optional<Record>> got = store->Get(graph.key);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->results, graph.results);
}

TEST_F(StoreFileTest, AVersion8FilesRecordsReadAsFullSearchesAndGainProvenance) {
  Record record = GraphTestRecord(1);
  std::optional<Record> migrated;
  auto store = MigratedWith(record,
                            "ALTER TABLE records DROP COLUMN revalidated_from;"
                            "ALTER TABLE records DROP COLUMN "
                            "revalidated_from_driver;"
                            "PRAGMA user_version = 8;",
                            &migrated);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(migrated->revalidated_from_cudnn, 0);
  record.revalidated_from_cudnn = 91400;
  ASSERT_TRUE(store->Put(record).ok());
  absl::StatusOr<std::optional<Record>> got = store->Get(record.key);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->revalidated_from_cudnn, 91400);
}

TEST_F(StoreFileTest, AVersion9FilesRecordsReadAsFullSearchesAndGainDriverProvenance) {
  Record record = GraphTestRecord(1);  // driver 580.65.06
  record.revalidated_from_cudnn = 91400;
  std::optional<Record> migrated;
  auto store = MigratedWith(record,
                            "ALTER TABLE records DROP COLUMN "
                            "revalidated_from_driver;"
                            "PRAGMA user_version = 9;",
                            &migrated);
  ASSERT_NE(store, nullptr);
  ExpectSameRecord(*migrated, record);  // "" after the migration
  EXPECT_EQ(migrated->revalidated_from_driver, "");
  record.revalidated_from_driver = "575.57.08";
  ASSERT_TRUE(store->Put(record).ok());
  absl::StatusOr<std::optional<Record>> got = store->Get(record.key);
  ASSERT_TRUE(got.ok() && got->has_value());
  ExpectSameRecord(**got, record);
  EXPECT_EQ((*got)->revalidated_from_driver, "575.57.08");
}

TEST_F(StoreFileTest, ARecordOfAnotherDriverKeepsTheOneItReplacesWhole) {
  const Record old = GraphTestRecord(1);  // driver 580.65.06, with plans
  Record retimed = old;
  retimed.driver_version = "590.10.01";
  retimed.revalidated_from_driver = old.driver_version;
  retimed.results.resize(1);
  {
    auto store = MustOpen();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Put(old).ok());
    ASSERT_TRUE(store->Put(retimed).ok());
    auto now = store->Get(old.key);
    ASSERT_TRUE(now.ok() && now->has_value());
    EXPECT_EQ((*now)->driver_version, "590.10.01");
  }
  EXPECT_EQ(RawInt(path_, "SELECT count(*) FROM superseded_records"), 1);
  EXPECT_EQ(RawText(path_, "SELECT driver_version FROM superseded_records"),
            old.driver_version);
  EXPECT_EQ(RawText(path_, "SELECT key_text FROM superseded_records"),
            old.key.ToText());
  absl::StatusOr<Record> kept = RecordFromJson(
      RawText(path_, "SELECT record_json FROM superseded_records"));
  ASSERT_TRUE(kept.ok()) << kept.status();
  Record expected = old;
  expected.id = kept->id;
  expected.served_count = kept->served_count;
  ExpectSameRecord(*kept, expected);
  EXPECT_EQ(kept->results, old.results);  // plans included
}

TEST_F(StoreFileTest, ARecordOfTheSameDriverReplacesTheStoredOneKeepingNothing) {
  const Record old = GraphTestRecord(1);
  Record again = old;
  again.results.resize(1);
  {
    auto store = MustOpen();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Put(old).ok());
    ASSERT_TRUE(store->Put(again).ok());
  }
  EXPECT_EQ(RawInt(path_, "SELECT count(*) FROM superseded_records"), 0);
}

TEST_F(StoreFileTest, ARowWhoseDriverProvenanceIsNotAnOlderDriverIsABadRow) {
  Record record = TestRecord(1);  // driver 580.65.06
  {
    auto store = MustOpen();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Put(record).ok());
  }
  ASSERT_TRUE(Raw(path_)
                  ->Execute("UPDATE records SET revalidated_from_driver = "
                            "'590.1'")
                  .ok());
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  absl::StatusOr<std::optional<Record>> got = store->Get(record.key);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(got.status().message(), HasSubstr("revalidated_from_driver"));
}

TEST_F(StoreFileTest, RefusesANewerSchemaWithoutTouchingIt) {
  MakeStore(1);
  ASSERT_TRUE(Raw(path_)
                  ->Execute(absl::StrCat("PRAGMA user_version = ",
                                         kStoreSchemaVersion + 1))
                  .ok());
  absl::StatusOr<std::unique_ptr<Store>> store = Open();
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), HasSubstr("newer"));
  EXPECT_THAT(store.status().message(), HasSubstr(path_));
  EXPECT_EQ(RawInt(path_, "PRAGMA user_version"), kStoreSchemaVersion + 1);
  EXPECT_EQ(Open(/*read_only=*/true).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(StoreFileTest, RefusesAnotherApplicationsDatabase) {
  ASSERT_TRUE(
      Raw(path_)->Execute("CREATE TABLE photos(id INTEGER PRIMARY KEY)").ok());
  absl::StatusOr<std::unique_ptr<Store>> store = Open();
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), HasSubstr("not a tunedb database"));
  EXPECT_THAT(store.status().message(), HasSubstr(path_));
  // Untouched: no tunedb tables, still in its own journal mode.
  EXPECT_EQ(RawInt(path_, "SELECT COUNT(*) FROM sqlite_schema"), 1);
  EXPECT_EQ(RawText(path_, "PRAGMA journal_mode"), "delete");
}

TEST_F(StoreFileTest, RefusesAForeignApplicationId) {
  ASSERT_TRUE(Raw(path_)
                  ->Execute("PRAGMA application_id = 305419896;"
                            "PRAGMA user_version = 2")
                  .ok());
  absl::StatusOr<std::unique_ptr<Store>> store = Open();
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), HasSubstr("0x12345678"));
}

TEST_F(StoreFileTest, RefusesAFileOfGarbage) {
  std::mt19937 random(7);
  std::string garbage(8192, '\0');
  for (char& c : garbage) c = static_cast<char>(random());
  WriteFile(path_, garbage);
  absl::StatusOr<std::unique_ptr<Store>> store = Open();
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), HasSubstr(path_));
  EXPECT_EQ(ReadFile(path_), garbage);  // never reset
  EXPECT_EQ(Open(/*read_only=*/true).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(StoreFileTest, RefusesATruncatedFile) {
  MakeStore(300);
  const std::string whole = ReadFile(path_);
  ASSERT_GT(whole.size(), 16384u);
  ASSERT_EQ(truncate(path_.c_str(), static_cast<off_t>(whole.size() / 2)), 0);
  absl::StatusOr<std::unique_ptr<Store>> store = Open();
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition)
      << store.status();
  EXPECT_THAT(store.status().message(), HasSubstr(path_));
  EXPECT_EQ(FileSize(path_), static_cast<int64_t>(whole.size() / 2));
}

TEST_F(StoreFileTest, RefusesAFileWithACorruptPage) {
  MakeStore(300);
  std::string bytes = ReadFile(path_);
  const size_t page = 4096;
  ASSERT_GT(bytes.size(), 6 * page);
  // Scribble over the b-tree pages after the first (schema) page.
  for (size_t i = page; i < 5 * page; ++i) bytes[i] = static_cast<char>(i * 31);
  WriteFile(path_, bytes);
  absl::StatusOr<std::unique_ptr<Store>> store = Open();
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition)
      << store.status();
  EXPECT_THAT(store.status().message(), HasSubstr(path_));
  EXPECT_EQ(ReadFile(path_), bytes);
}

TEST_F(StoreFileTest, OpenReadsABoundedPartOfTheFileAndQuickCheckTheRest) {
  MakeStore(600);
  // A leaf of the records table away from both ends of its b-tree: the open
  // check reads the root-to-edge paths only, the full check reads it all.
  const int64_t page =
      RawInt(path_,
             "SELECT pageno FROM dbstat WHERE name = 'records' AND"
             " pagetype = 'leaf' ORDER BY path LIMIT 1 OFFSET"
             " (SELECT COUNT(*) / 2 FROM dbstat WHERE name = 'records' AND"
             " pagetype = 'leaf')");
  ASSERT_GT(page, 2);
  std::string bytes = ReadFile(path_);
  const size_t size = 4096;
  for (size_t i = (page - 1) * size + 8; i < page * size; ++i) {
    bytes[i] = static_cast<char>(i * 31);
  }
  WriteFile(path_, bytes);

  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  absl::Status full = store->QuickCheck();
  EXPECT_EQ(full.code(), absl::StatusCode::kFailedPrecondition) << full;
  EXPECT_THAT(full.message(), HasSubstr(path_));
}

TEST_F(StoreFileTest, MissingDirectoryIsAnErrorNotACrash) {
  Store::Options options;
  options.path = dir_.File("no/such/dir/tunedb.db");
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(options);
  EXPECT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr(options.path));
}

TEST_F(StoreFileTest, ReadOnlyStoreReadsButNeverWrites) {
  MakeStore(3);
  auto store = MustOpen(/*read_only=*/true);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Count().value_or(-1), 3);
  ExpectSameRecord(store->Get(StemKey(2))->value(), TestRecord(2));
  EXPECT_TRUE(store->QuickCheck().ok());
  EXPECT_EQ(store->Put(TestRecord(9)).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store->Delete({}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store->AddServed({{1, 1}}).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store->Checkpoint().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store->Count().value_or(-1), 3);
}

TEST_F(StoreFileTest, ReadOnlyOpenOfAMissingFileIsNotFound) {
  absl::StatusOr<std::unique_ptr<Store>> store = Open(/*read_only=*/true);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(store.status().message(), HasSubstr(path_));
  EXPECT_EQ(FileSize(path_), -1);  // not created
}

TEST_F(StoreFileTest, ReadOnlyOpenDoesNotMigrate) {
  ASSERT_TRUE(Raw(path_)
                  ->Execute(absl::StrCat(kSchemaV1,
                                         "PRAGMA user_version = 1;"
                                         "PRAGMA application_id = ",
                                         kStoreApplicationId))
                  .ok());
  absl::StatusOr<std::unique_ptr<Store>> store = Open(/*read_only=*/true);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), HasSubstr("older"));
  EXPECT_EQ(RawInt(path_, "PRAGMA user_version"), 1);
}

TEST_F(StoreFileTest, ReadOnlyOpenOfAnEmptyFileIsRefused) {
  WriteFile(path_, "");
  EXPECT_EQ(Open(/*read_only=*/true).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(StoreFileTest, TwoStoresOnOneFileSeeEachOthersWrites) {
  auto a = MustOpen();
  auto b = MustOpen();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(a->Put(TestRecord(1)).ok());
  ExpectSameRecord(b->Get(StemKey(1))->value(), TestRecord(1));
  ASSERT_TRUE(b->Put(TestRecord(2)).ok());
  EXPECT_EQ(a->Count().value_or(-1), 2);
  auto reader = MustOpen(/*read_only=*/true);
  ASSERT_NE(reader, nullptr);
  ASSERT_TRUE(a->Put(TestRecord(3)).ok());
  EXPECT_EQ(reader->Count().value_or(-1), 3);
}

TEST_F(StoreFileTest, RowsOfAnOlderKeyFormatAreNeverReturned) {
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Put(TestRecord(1)).ok());
  std::string old_text = StemKey(2).ToText();
  old_text.replace(0, 4, "kv=0");
  ASSERT_TRUE(Raw(path_)
                  ->Execute(absl::StrCat(
                      "INSERT INTO records(key_version, key_hash, key_text,"
                      " gpu_model, cudnn_version, op, measured_at_us, host,"
                      " gpu_uuid, driver_version, finder, repeats,"
                      " workspace_cap_bytes, search_ms, verified) VALUES(0, ",
                      static_cast<int64_t>(StemKey(2).Hash()), ", '", old_text,
                      "', 'Simulated GPU', 91900, 'fwd', 5, '', '', '', '', 1,"
                      " 0, 1, 0)"))
                  .ok());
  EXPECT_EQ(RawInt(path_, "SELECT COUNT(*) FROM records"), 2);
  EXPECT_EQ(store->Count().value_or(-1), 1);
  std::vector<int64_t> keys;
  ASSERT_TRUE(store
                  ->Query({}, 0, 0,
                          [&](const Record& record) {
                            keys.push_back(record.key.problem.n);
                            return true;
                          })
                  .ok());
  EXPECT_EQ(keys, std::vector<int64_t>{1});
  EXPECT_FALSE(store->Get(StemKey(2))->has_value());
  EXPECT_EQ(store->Delete({}).value_or(-1), 1);
}

TEST_F(StoreFileTest, DeleteRemovesTheResultsToo) {
  MakeStore(3);
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(RawInt(path_, "SELECT COUNT(*) FROM results"), 12);
  EXPECT_EQ(store->Delete({{{"n", "2"}}}).value_or(-1), 1);
  EXPECT_EQ(RawInt(path_, "SELECT COUNT(*) FROM results"), 8);
}

}  // namespace
}  // namespace tunedb::store_test
