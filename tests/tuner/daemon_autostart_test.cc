// The parts of the user's own daemon that stand alone: where its files go,
// the private folders, the socket probe and the keeper's idle clock
// (tuner/daemon_autostart.h, tuner/daemon_keeper.h).
#include "tuner/daemon_autostart.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "tests/testing/temp_dir.h"
#include "tuner/daemon_keeper.h"

namespace tunedb::tuner {
namespace {

using testing_util::TempDir;

UserDaemonPaths PathsWith(std::map<std::string, std::string> vars) {
  return UserDaemonPathsFor(
      [vars](const char* name) -> const char* {
        auto it = vars.find(name);
        return it == vars.end() ? nullptr : it->second.c_str();
      },
      1234, "/home/pw");
}

TEST(UserDaemonPathsTest, XdgFoldersHoldTheSocketAndTheDatabase) {
  const UserDaemonPaths p = PathsWith({{"XDG_RUNTIME_DIR", "/run/user/1234"},
                                       {"XDG_CACHE_HOME", "/c"},
                                       {"HOME", "/home/u"}});
  EXPECT_EQ(p.socket, "/run/user/1234/tunedb/tunedbd.sock");
  EXPECT_EQ(p.address(), "unix:/run/user/1234/tunedb/tunedbd.sock");
  EXPECT_EQ(p.start_lock, "/run/user/1234/tunedb/start.lock");
  EXPECT_EQ(p.pid_file, "/run/user/1234/tunedb/tunedbd.pid");
  EXPECT_EQ(p.db, "/c/tunedb/tunedb.db");
  EXPECT_EQ(p.log, "/c/tunedb/tunedbd.log");
}

TEST(UserDaemonPathsTest, WithoutXdgTheSocketIsInTmpAndTheDatabaseInHome) {
  UserDaemonPaths p = PathsWith({{"HOME", "/home/u"}});
  EXPECT_EQ(p.socket, "/tmp/tunedb-1234/tunedbd.sock");
  EXPECT_EQ(p.db, "/home/u/.cache/tunedb/tunedb.db");
  // Relative or empty values count as unset; no HOME: the user's entry.
  p = PathsWith({{"XDG_RUNTIME_DIR", "run"}, {"XDG_CACHE_HOME", ""}});
  EXPECT_EQ(p.socket, "/tmp/tunedb-1234/tunedbd.sock");
  EXPECT_EQ(p.db, "/home/pw/.cache/tunedb/tunedb.db");
}

TEST(MakePrivateDirTest, MakesAFolderOnlyTheUserMayEnter) {
  TempDir dir;
  const std::string made = dir.File("a/b/tunedb");
  ASSERT_TRUE(MakePrivateDir(made, /*parents=*/true).ok());
  struct stat st {};
  ASSERT_EQ(stat(made.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(st.st_uid, getuid());
  EXPECT_TRUE(MakePrivateDir(made, /*parents=*/false).ok());  // again: fine
}

TEST(MakePrivateDirTest, RefusesAFolderOthersMayWriteOrAFile) {
  TempDir dir;
  const std::string open_dir = dir.File("open");
  ASSERT_EQ(mkdir(open_dir.c_str(), 0700), 0);
  ASSERT_EQ(chmod(open_dir.c_str(), 0777), 0);
  EXPECT_FALSE(MakePrivateDir(open_dir, false).ok());
  std::ofstream(dir.File("file")) << "";
  EXPECT_FALSE(MakePrivateDir(dir.File("file"), false).ok());
  EXPECT_FALSE(MakePrivateDir(dir.File("file/below"), true).ok());
}

TEST(SocketAnswersTest, OnlyAListeningSocketAnswers) {
  TempDir dir;
  const std::string path = dir.File("s.sock");
  EXPECT_FALSE(SocketAnswers(path));
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, path.c_str());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_FALSE(SocketAnswers(path));  // bound, not listening: a stale file
  ASSERT_EQ(listen(fd, 1), 0);
  EXPECT_TRUE(SocketAnswers(path));
  close(fd);
}

TEST(IdleClockTest, ExpiresOnlyAfterTheLimitWithoutUse) {
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  IdleClock clock(t0, absl::Seconds(60));
  clock.Observe(t0 + absl::Seconds(10), false, 5, 0);
  EXPECT_FALSE(clock.Expired(t0 + absl::Seconds(59)));
  clock.Observe(t0 + absl::Seconds(59), false, 5, 0);  // unchanged count
  EXPECT_TRUE(clock.Expired(t0 + absl::Seconds(60)));
}

TEST(IdleClockTest, ARunningProgramServedRequestsOrQueuedSearchesAreUse) {
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  IdleClock clock(t0, absl::Seconds(60));
  clock.Observe(t0 + absl::Seconds(1), false, 5, 0);
  clock.Observe(t0 + absl::Seconds(50), /*held=*/true, 5, 0);
  EXPECT_FALSE(clock.Expired(t0 + absl::Seconds(100)));
  clock.Observe(t0 + absl::Seconds(100), false, /*served=*/6, 0);
  EXPECT_FALSE(clock.Expired(t0 + absl::Seconds(150)));
  clock.Observe(t0 + absl::Seconds(150), false, 6, /*queued=*/1);
  EXPECT_FALSE(clock.Expired(t0 + absl::Seconds(200)));
  EXPECT_EQ(clock.last_use(), t0 + absl::Seconds(150));
}

TEST(IdleClockTest, ADaemonThatDoesNotAnswerKeepsTheLastCount) {
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  IdleClock clock(t0, absl::Seconds(60));
  clock.Observe(t0 + absl::Seconds(1), false, 5, 0);
  clock.Observe(t0 + absl::Seconds(2), false, -1, -1);
  clock.Observe(t0 + absl::Seconds(3), false, 5, 0);  // not a change
  EXPECT_TRUE(clock.Expired(t0 + absl::Seconds(60)));
}

}  // namespace
}  // namespace tunedb::tuner
