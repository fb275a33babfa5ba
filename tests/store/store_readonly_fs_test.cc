// Opening a store where it cannot be written: on a read-only file system (a
// small tmpfs remounted read-only) and in a folder this user may not write
// (as root, a child process that becomes "nobody", since root bypasses
// permissions). The error names the path and the cause, with the status
// that says which: FAILED_PRECONDITION for a read-only file system,
// PERMISSION_DENIED for permissions.
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/store.h"
#include "tests/store/store_test_util.h"

namespace tunedb::store_test {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

absl::StatusOr<std::unique_ptr<Store>> OpenAt(const std::string& path,
                                              bool read_only = false) {
  Store::Options options;
  options.path = path;
  options.read_only = read_only;
  options.busy_timeout_ms = 1000;
  return Store::Open(options);
}

class ReadOnlyFileSystemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mount_point_ = dir_.File("ro");
    ASSERT_EQ(mkdir(mount_point_.c_str(), 0755), 0);
    if (mount("tunedb-test", mount_point_.c_str(), "tmpfs", 0, "size=8m") !=
        0) {
      GTEST_SKIP() << "cannot mount a tmpfs here (" << std::strerror(errno)
                   << "); the test needs root or CAP_SYS_ADMIN";
    }
    mounted_ = true;
    path_ = mount_point_ + "/tunedb.db";
  }

  void TearDown() override {
    if (mounted_) umount2(mount_point_.c_str(), MNT_DETACH);
  }

  void RemountReadOnly() {
    ASSERT_EQ(mount(nullptr, mount_point_.c_str(), nullptr,
                    MS_REMOUNT | MS_RDONLY, nullptr),
              0)
        << std::strerror(errno);
  }

  TempDir dir_;
  std::string mount_point_;
  std::string path_;
  bool mounted_ = false;
};

TEST_F(ReadOnlyFileSystemTest, OpeningAStoreForWritingNamesThePathAndTheCause) {
  {
    auto store = OpenAt(path_);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)->Put(TestRecord(1)).ok());
  }
  RemountReadOnly();
  absl::StatusOr<std::unique_ptr<Store>> store = OpenAt(path_);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition)
      << store.status();
  EXPECT_THAT(store.status().message(),
              AllOf(HasSubstr(path_), HasSubstr("read-only file system"),
                    Not(HasSubstr("PRAGMA")),
                    Not(HasSubstr("unable to open database file"))));
}

TEST_F(ReadOnlyFileSystemTest, CreatingAStoreNamesThePathAndTheCause) {
  RemountReadOnly();
  absl::StatusOr<std::unique_ptr<Store>> store = OpenAt(path_);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition)
      << store.status();
  EXPECT_THAT(store.status().message(),
              AllOf(HasSubstr(path_), HasSubstr("read-only file system")));
}

TEST_F(ReadOnlyFileSystemTest, AReadOnlyStoreStillReadsThere) {
  {
    auto store = OpenAt(path_);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)->Put(TestRecord(1)).ok());
  }
  RemountReadOnly();
  absl::StatusOr<std::unique_ptr<Store>> store =
      OpenAt(path_, /*read_only=*/true);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ((*store)->Count().value_or(-1), 1);
  ExpectSameRecord((*store)->Get(StemKey(1))->value(), TestRecord(1));
}

// The status code and message of opening `path` for writing, from a child
// process running as "nobody" (root may write anything).
std::pair<int, std::string> OpenAsNobody(const std::string& path) {
  int fds[2];
  if (pipe(fds) != 0) return {-1, "pipe failed"};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string report = "setuid failed";
    int code = -1;
    if (setgid(65534) == 0 && setuid(65534) == 0) {
      absl::StatusOr<std::unique_ptr<Store>> store = OpenAt(path);
      code = static_cast<int>(store.status().code());
      report = std::string(store.status().message());
    }
    const std::string out = absl::StrCat(code, "\n", report);
    ssize_t written = write(fds[1], out.data(), out.size());
    _exit(written < 0 ? 1 : 0);
  }
  close(fds[1]);
  std::string in;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fds[0], buffer, sizeof(buffer))) > 0) in.append(buffer, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  const size_t newline = in.find('\n');
  if (newline == std::string::npos) return {-1, in};
  return {std::stoi(in.substr(0, newline)), in.substr(newline + 1)};
}

TEST(StorePermissionTest, AFolderThisUserMayNotWriteIsPermissionDenied) {
  TempDir dir;
  const std::string folder = dir.File("locked");
  ASSERT_EQ(mkdir(folder.c_str(), 0755), 0);
  ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);
  const std::string path = folder + "/tunedb.db";
  int code;
  std::string message;
  if (geteuid() == 0) {
    std::tie(code, message) = OpenAsNobody(path);
  } else {
    ASSERT_EQ(chmod(folder.c_str(), 0555), 0);
    absl::StatusOr<std::unique_ptr<Store>> store = OpenAt(path);
    code = static_cast<int>(store.status().code());
    message = std::string(store.status().message());
    chmod(folder.c_str(), 0755);
  }
  EXPECT_EQ(code, static_cast<int>(absl::StatusCode::kPermissionDenied))
      << message;
  EXPECT_THAT(message, AllOf(HasSubstr(path), HasSubstr(folder),
                             HasSubstr("Permission denied")));
}

}  // namespace
}  // namespace tunedb::store_test
