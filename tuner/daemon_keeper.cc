#include "tuner/daemon_keeper.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "tunedb/v1/tunedb.grpc.pb.h"

extern char** environ;

namespace tunedb::tuner {
namespace {

volatile sig_atomic_t stop_requested = 0;

void RequestStop(int) { stop_requested = 1; }

void Log(const std::string& line) {
  std::fprintf(stderr, "tunedb keeper: %s\n", line.c_str());
  std::fflush(stderr);
}

// The users lock taken exclusively (its fd) if no `tunedb run` holds it
// now, else -1 (also when it cannot be opened: counted as in use).
int LockUnused(const std::string& users_lock) {
  const int fd = open(users_lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  if (flock(fd, LOCK_EX | LOCK_NB) == 0) return fd;
  close(fd);
  return -1;
}

// The daemon's served requests and queued searches (-1, -1 if it does not
// answer within a second).
std::pair<int64_t, int64_t> DaemonActivity(v1::TuneDb::Stub& stub) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(1));
  v1::StatsResponse stats;
  if (!stub.Stats(&context, v1::StatsRequest(), &stats).ok()) return {-1, -1};
  int64_t queued = 0;
  for (const auto& [device, depth] : stats.queue_depths()) queued += depth;
  const int64_t served = stats.hits() + stats.misses() + stats.searches() +
                         stats.search_failures() + stats.rejected() +
                         stats.reports() + stats.predictions();
  return {served, queued};
}

bool WritePidFile(const std::string& path, pid_t daemon) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << getpid() << " " << daemon << "\n";
    if (!out) return false;
  }
  return rename(tmp.c_str(), path.c_str()) == 0;
}

pid_t SpawnDaemon(std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
    return -1;
  }
  return pid;
}

int ExitCodeOf(int status) {
  return WIFEXITED(status)     ? WEXITSTATUS(status)
         : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                               : 1;
}

// Watches the daemon until it exits (its wait status) or should stop
// (-1: idle for the idle time, or a stop signal). Stopping for idleness,
// it keeps the users lock in *users_fd, so that a `tunedb run` starting
// meanwhile waits for this daemon to be gone and starts another.
int Watch(const UserDaemonPaths& paths, pid_t daemon, double idle_exit_s,
          int* users_fd) {
  auto stub = v1::TuneDb::NewStub(
      grpc::CreateChannel(paths.address(), grpc::InsecureChannelCredentials()));
  IdleClock idle(absl::Now(), absl::Seconds(idle_exit_s));
  const absl::Duration every =
      std::clamp(absl::Seconds(idle_exit_s) / 4, absl::Milliseconds(200),
                 absl::Seconds(10));
  absl::Time next_look = absl::Now() + every;
  while (stop_requested == 0) {
    int status = 0;
    if (waitpid(daemon, &status, WNOHANG) == daemon) return status;
    if (absl::Now() >= next_look) {
      const auto [served, queued] = DaemonActivity(*stub);
      const int fd = LockUnused(paths.users_lock);
      idle.Observe(absl::Now(), fd < 0, served, queued);
      if (fd >= 0 && idle.Expired(absl::Now())) {
        Log(absl::StrCat("idle for ", idle_exit_s, "s; stopping tunedbd"));
        *users_fd = fd;
        return -1;
      }
      if (fd >= 0) close(fd);
      next_look = absl::Now() + every;
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  Log("asked to stop; stopping tunedbd");
  return -1;
}

}  // namespace

void IdleClock::Observe(absl::Time now, bool held, int64_t served,
                        int64_t queued) {
  const bool moved = served >= 0 && last_served_ >= 0 && served != last_served_;
  if (served >= 0) last_served_ = served;
  if (held || moved || queued > 0) last_use_ = now;
}

int RunDaemonKeeper(const UserDaemonPaths& paths, double idle_exit_s,
                    std::vector<std::string> daemon_argv) {
  struct sigaction stop {};
  stop.sa_handler = RequestStop;
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &stop, nullptr);
  const pid_t daemon = SpawnDaemon(daemon_argv);
  if (daemon < 0) {
    Log(absl::StrCat("cannot start ", daemon_argv.front()));
    return 1;
  }
  if (!WritePidFile(paths.pid_file, daemon)) {
    Log(absl::StrCat("cannot write ", paths.pid_file));
  }
  Log(absl::StrCat("tunedbd (pid ", daemon, ") started; it stops after ",
                   idle_exit_s, "s unused"));
  int users_fd = -1;
  int status = Watch(paths, daemon, idle_exit_s, &users_fd);
  if (status == -1) {
    kill(daemon, SIGTERM);
    while (waitpid(daemon, &status, 0) < 0 && errno == EINTR) {
    }
  }
  unlink(paths.pid_file.c_str());
  if (users_fd >= 0) close(users_fd);
  const int code = ExitCodeOf(status);
  Log(absl::StrCat("tunedbd exited (", code, ")"));
  return code;
}

}  // namespace tunedb::tuner
