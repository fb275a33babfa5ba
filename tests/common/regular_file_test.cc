#include "common/regular_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/testing/temp_dir.h"

namespace tunedb {
namespace {

using testing_util::TempDir;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The status of reading `path` with a bound of 1 MiB, which must come in
// under a second.
absl::Status ReadQuickly(const std::string& path) {
  const auto start = std::chrono::steady_clock::now();
  absl::Status s = ReadRegularFile(path, 1 << 20).status();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1))
      << path;
  return s;
}

TEST(RegularFileTest, ReadsARegularFileWhole) {
  TempDir dir;
  std::ofstream(dir.File("a")) << "hello";
  absl::StatusOr<std::string> text = ReadRegularFile(dir.File("a"), 5);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "hello");
  EXPECT_EQ(ReadRegularFile(dir.File("none"), 5).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(RegularFileTest, RefusesDevicesFifosAndFoldersAtOnceNamingWhatTheyAre) {
  TempDir dir;
  const std::string fifo = dir.File("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  absl::Status s = ReadQuickly(fifo);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("is a FIFO, not a regular file"),
            std::string::npos)
      << s;
  s = ReadQuickly(dir.path());
  EXPECT_NE(s.message().find("is a directory"), std::string::npos) << s;
  for (const char* device : {"/dev/zero", "/dev/urandom", "/dev/full"}) {
    s = ReadQuickly(device);
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << device;
    EXPECT_NE(s.message().find("character device"), std::string::npos) << s;
  }
  // A link to a device is the device.
  const std::string link = dir.File("zero.pin");
  ASSERT_EQ(symlink("/dev/zero", link.c_str()), 0);
  EXPECT_EQ(ReadQuickly(link).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(RegularFileTest, RefusesAFileOverTheBoundWithoutReadingIt) {
  TempDir dir;
  const std::string big = dir.File("big");
  {
    std::ofstream out(big);
    out << std::string(1001, 'x');
  }
  absl::Status s = ReadRegularFile(big, 1000).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("1001 bytes, over the bound of 1000"),
            std::string::npos)
      << s;
  // 100 MB (sparse): refused at once.
  ASSERT_EQ(truncate(big.c_str(), 100'000'000), 0);
  EXPECT_EQ(ReadQuickly(big).code(), absl::StatusCode::kResourceExhausted);
}

TEST(RegularFileTest, ReplacingThroughALinkWritesItsTargetAndKeepsTheLink) {
  TempDir dir;
  ASSERT_EQ(mkdir(dir.File("pins").c_str(), 0700), 0);
  const std::string target = dir.File("pins/real.pin");
  std::ofstream(target) << "old";
  const std::string link = dir.File("job.pin");
  ASSERT_EQ(symlink("pins/real.pin", link.c_str()), 0);  // relative
  ASSERT_TRUE(ReplaceRegularFile(link, "new").ok());
  struct stat st;
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the link was replaced by a file";
  EXPECT_EQ(Read(target), "new");
  // A link to a file not made yet: the file is made where it points.
  const std::string dangling = dir.File("later.pin");
  ASSERT_EQ(symlink(dir.File("pins/later.pin").c_str(), dangling.c_str()), 0);
  ASSERT_TRUE(ReplaceRegularFile(dangling, "made").ok());
  EXPECT_EQ(Read(dir.File("pins/later.pin")), "made");
  ASSERT_EQ(lstat(dangling.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
}

TEST(RegularFileTest, RefusesToReplaceADeviceOrAFolderAndSaysWhyAWriteFailed) {
  TempDir dir;
  absl::Status s = ReplaceRegularFile("/dev/full", "x");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  s = ReplaceRegularFile(dir.path(), "x");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  s = ReplaceRegularFile(dir.File("no/such/folder.pin"), "x");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_NE(s.message().find("no/such/folder.pin"), std::string::npos) << s;
  EXPECT_NE(s.message().find("No such file"), std::string::npos) << s;
}

TEST(RegularFileTest, ALoopOfLinksIsRefused) {
  TempDir dir;
  ASSERT_EQ(symlink(dir.File("b").c_str(), dir.File("a").c_str()), 0);
  ASSERT_EQ(symlink(dir.File("a").c_str(), dir.File("b").c_str()), 0);
  EXPECT_EQ(ReplaceRegularFile(dir.File("a"), "x").code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tunedb
