// A store opened with a replacement Env: file-system states that are hard to
// make for real (a read-only file system, which needs a mount; a file this
// user may not write, which root bypasses; a WAL grown past its limit) are
// reported by a fake Env, and the store acts on what its Env says.
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/env.h"
#include "store/sqlite_store.h"
#include "tests/store/store_test_util.h"

namespace tunedb::store_test {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// The real file system, except for what a test sets: a folder on a
// read-only file system, an errno for every write access, sizes of files.
class FakeEnv : public Env {
 public:
  bool FileExists(const std::string& path) override {
    return real_->FileExists(path);
  }
  int64_t FileSize(const std::string& path) override {
    auto it = sizes.find(path);
    return it != sizes.end() ? it->second : real_->FileSize(path);
  }
  int WriteAccess(const std::string& path) override {
    return write_error ? *write_error : real_->WriteAccess(path);
  }
  bool IsReadOnlyFileSystem(const std::string& folder) override {
    return read_only_fs || real_->IsReadOnlyFileSystem(folder);
  }
  int CreateFileWithMode(const std::string& path, unsigned mode) override {
    return real_->CreateFileWithMode(path, mode);
  }

  bool read_only_fs = false;
  std::optional<int> write_error;
  std::map<std::string, int64_t> sizes;

 private:
  Env* const real_ = Env::Default();
};

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

int64_t RealSize(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : -1;
}

class StoreEnvTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::unique_ptr<SqliteStore>> OpenWith(Env* env,
                                                        bool read_only) {
    Store::Options options;
    options.path = path_;
    options.read_only = read_only;
    options.busy_timeout_ms = 1000;
    options.checkpoint_every_writes = 1000;
    options.checkpoint_wal_bytes = int64_t{1} << 20;
    return SqliteStore::Open(options, env);
  }

  // A store file holding TestRecord(1) and TestRecord(2), its WAL folded in.
  void MakeStore() {
    auto store = OpenWith(Env::Default(), /*read_only=*/false);
    ASSERT_TRUE(store.ok()) << store.status();
    MustPut(**store, TestRecord(1));
    MustPut(**store, TestRecord(2));
  }

  TempDir dir_;
  // '%', '?' and '#' must be escaped in the URI of an immutable open.
  const std::string path_ = dir_.File("odd%name?#.db");
  FakeEnv env_;
};

TEST_F(StoreEnvTest, OnAReadOnlyFileSystemAReadOnlyStoreOpensTheFileImmutable) {
  MakeStore();
  ASSERT_FALSE(Exists(path_ + "-wal"));
  env_.read_only_fs = true;
  auto store = OpenWith(&env_, /*read_only=*/true);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ((*store)->Count().value_or(-1), 2);
  ExpectSameRecord((*store)->Get(StemKey(2))->value(), TestRecord(2));
  // An immutable open makes neither a WAL nor its shared-memory index.
  EXPECT_FALSE(Exists(path_ + "-shm"));
  EXPECT_FALSE(Exists(path_ + "-wal"));
}

TEST_F(StoreEnvTest, AWalLeftOnAReadOnlyFileSystemIsRefusedNamingIt) {
  MakeStore();
  env_.read_only_fs = true;
  env_.sizes[path_ + "-wal"] = 4096;
  auto store = OpenWith(&env_, /*read_only=*/true);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition)
      << store.status();
  EXPECT_THAT(store.status().message(),
              AllOf(HasSubstr(path_ + "-wal"),
                    HasSubstr("is on a read-only file system"),
                    HasSubstr("mount it read-write once")));
}

TEST_F(StoreEnvTest, AFileOnAReadOnlyFileSystemIsNotOpenedForWriting) {
  MakeStore();
  env_.write_error = EROFS;
  auto store = OpenWith(&env_, /*read_only=*/false);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition)
      << store.status();
  // The file is named first, as it exists.
  EXPECT_THAT(store.status().message(),
              AllOf(HasSubstr(absl::StrCat("the file ", path_,
                                           " is on a read-only file system")),
                    HasSubstr("(EROFS)"), Not(HasSubstr("its folder"))));
}

TEST_F(StoreEnvTest, AFolderThisUserMayNotWriteIsPermissionDeniedEvenForRoot) {
  env_.write_error = EACCES;
  auto store = OpenWith(&env_, /*read_only=*/false);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kPermissionDenied)
      << store.status();
  EXPECT_THAT(store.status().message(),
              AllOf(HasSubstr(absl::StrCat("its folder ", dir_.path())),
                    HasSubstr("may not be written by this user")));
  EXPECT_FALSE(Exists(path_));  // nothing was created
}

TEST_F(StoreEnvTest, AReadOnlyStoreOfAFileTheEnvDoesNotSeeIsNotFound) {
  auto store = OpenWith(&env_, /*read_only=*/true);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kNotFound)
      << store.status();
  EXPECT_THAT(store.status().message(), HasSubstr(path_));
}

TEST_F(StoreEnvTest, AWalPastItsLimitIsTruncatedAfterTheNextWrite) {
  auto store = OpenWith(&env_, /*read_only=*/false);
  ASSERT_TRUE(store.ok()) << store.status();
  MustPut(**store, TestRecord(1));
  // Below the limit and before checkpoint_every_writes: the WAL stays.
  ASSERT_GT(RealSize(path_ + "-wal"), 0);
  env_.sizes[path_ + "-wal"] = (int64_t{1} << 20) + 1;
  MustPut(**store, TestRecord(2));
  EXPECT_EQ(RealSize(path_ + "-wal"), 0);
}

TEST_F(StoreEnvTest, SizeBytesIsTheFileAndItsWalAsTheEnvSeesThem) {
  auto store = OpenWith(&env_, /*read_only=*/false);
  ASSERT_TRUE(store.ok()) << store.status();
  env_.sizes[path_] = 1000;
  env_.sizes[path_ + "-wal"] = 24;
  EXPECT_EQ((*store)->SizeBytes(), 1024);
}

}  // namespace
}  // namespace tunedb::store_test
