// Crash durability: a writer process is killed with SIGKILL while putting
// records; on reopening, the file passes quick_check and holds every record
// whose Put had returned.
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "store/store.h"
#include "tests/store/store_test_util.h"

extern char** environ;

namespace tunedb::store_test {
namespace {

// Complete lines of `buffer`, as numbers; the partial tail stays in `buffer`.
void TakeLines(std::string& buffer, std::vector<long>& out) {
  size_t start = 0;
  for (size_t end; (end = buffer.find('\n', start)) != std::string::npos;
       start = end + 1) {
    out.push_back(std::stol(buffer.substr(start, end - start)));
  }
  buffer.erase(0, start);
}

// Runs the writer from `first` for about `run_for`, kills it, and returns the
// acknowledged record numbers.
std::vector<long> RunAndKill(const std::string& path, long first,
                             std::chrono::milliseconds run_for) {
  int pipe_fds[2];
  EXPECT_EQ(pipe(pipe_fds), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[1]);
  std::string program = TUNEDB_CRASH_WRITER;
  std::string first_text = std::to_string(first);
  char* argv[] = {program.data(), const_cast<char*>(path.c_str()),
                  first_text.data(), nullptr};
  pid_t pid = 0;
  const int spawned =
      posix_spawn(&pid, program.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  EXPECT_EQ(spawned, 0) << "cannot run " << program;
  std::vector<long> acknowledged;
  if (spawned != 0) {
    close(pipe_fds[0]);
    return acknowledged;
  }

  std::string buffer;
  char chunk[4096];
  const auto deadline = std::chrono::steady_clock::now() + run_for;
  bool killed = false;
  while (true) {
    if (!killed && std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      killed = true;
    }
    pollfd fd = {pipe_fds[0], POLLIN, 0};
    poll(&fd, 1, 20);
    if (fd.revents == 0) continue;
    // Lines still in the pipe after the kill were printed after their Put
    // returned, so they count as acknowledged too; EOF ends the run.
    const ssize_t n = read(pipe_fds[0], chunk, sizeof(chunk));
    if (n <= 0) break;
    buffer.append(chunk, static_cast<size_t>(n));
    TakeLines(buffer, acknowledged);
  }
  close(pipe_fds[0]);
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "the writer ended on its own (status " << status << ")";
  return acknowledged;
}

TEST(StoreCrashTest, AcknowledgedPutsSurviveSigkill) {
  TempDir dir;
  const std::string path = dir.File("crash.db");
  std::vector<long> all;
  for (int round = 0; round < 3; ++round) {
    const long first = 1 + round * 100000L;
    std::vector<long> acknowledged =
        RunAndKill(path, first, std::chrono::milliseconds(400 + 150 * round));
    ASSERT_FALSE(acknowledged.empty()) << "round " << round;
    EXPECT_EQ(acknowledged.front(), first);
    all.insert(all.end(), acknowledged.begin(), acknowledged.end());

    Store::Options options;
    options.path = path;
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(options);
    ASSERT_TRUE(store.ok()) << store.status();
    ASSERT_TRUE((*store)->QuickCheck().ok());
    for (long n : all) {
      absl::StatusOr<std::optional<Record>> got = (*store)->Get(StemKey(n));
      ASSERT_TRUE(got.ok()) << got.status();
      ASSERT_TRUE(got->has_value()) << "acknowledged record " << n << " lost";
      EXPECT_EQ((*got)->results, TestRecord(n).results);
    }
    // At most the one Put in flight at the kill may be there unacknowledged.
    const int64_t count = (*store)->Count().value_or(-1);
    EXPECT_GE(count, static_cast<int64_t>(all.size()));
    EXPECT_LE(count, static_cast<int64_t>(all.size()) + round + 1);
  }
}

}  // namespace
}  // namespace tunedb::store_test
