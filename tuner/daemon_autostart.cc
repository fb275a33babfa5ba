#include "tuner/daemon_autostart.h"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

extern char** environ;

namespace tunedb::tuner {
namespace {

// `name`'s value if it is an absolute path, else nullptr.
const char* AbsoluteEnv(const std::function<const char*(const char*)>& env,
                        const char* name) {
  const char* v = env(name);
  return v != nullptr && v[0] == '/' ? v : nullptr;
}

absl::Status ErrnoError(const std::string& what) {
  return absl::FailedPreconditionError(
      absl::StrCat(what, ": ", std::strerror(errno)));
}

// Opens (creating) `path` and takes an flock of `operation` on it, retrying
// a LOCK_NB failure until `deadline`; the fd, or -1 with errno set.
int LockFile(const std::string& path, int operation, absl::Time deadline) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  while (flock(fd, operation | LOCK_NB) != 0) {
    if ((errno != EWOULDBLOCK && errno != EINTR) || absl::Now() > deadline) {
      const int saved = errno;
      close(fd);
      errno = saved;
      return -1;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  return fd;
}

// The last non-empty line of the file at `path` ("" if none).
std::string LastLine(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!absl::StripAsciiWhitespace(line).empty()) last = line;
  }
  return last;
}

// Starts the keeper, in a session of its own, its output appended to the
// log; its pid.
absl::StatusOr<pid_t> SpawnKeeper(const UserDaemonPaths& paths,
                                  const AutostartOptions& options) {
  std::vector<std::string> args = {options.keeper_binary,
                                   "run",
                                   "--daemon-keeper",
                                   "--daemon-idle-exit",
                                   absl::StrCat(options.idle_exit_s),
                                   "--",
                                   options.daemon_binary,
                                   "--socket",
                                   paths.socket,
                                   "--db",
                                   paths.db};
  for (const std::string& dir : options.cudnn_dirs) {
    args.push_back("--cudnn-lib-dir");
    args.push_back(dir);
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, paths.log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  pid_t pid = -1;
  const int rc =
      posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot start ", options.keeper_binary, ": ", std::strerror(rc)));
  }
  return pid;
}

// Waits for the socket to answer; an error if the keeper exits first or
// `deadline` passes.
absl::Status AwaitSocket(const UserDaemonPaths& paths, pid_t keeper,
                         absl::Time deadline) {
  while (!SocketAnswers(paths.socket)) {
    int status = 0;
    if (waitpid(keeper, &status, WNOHANG) == keeper) {
      const std::string last = LastLine(paths.log);
      return absl::FailedPreconditionError(
          absl::StrCat("tunedbd exited at start",
                       last.empty() ? "" : absl::StrCat(" (", last, ")"),
                       "; its log is ", paths.log));
    }
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("tunedbd did not answer on ", paths.socket,
                       " in time; its log is ", paths.log));
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  return absl::OkStatus();
}

// Under the start lock: starts the daemon unless another `tunedb run` did
// while this one waited for the lock. Whether this call started it.
absl::StatusOr<bool> StartLocked(const UserDaemonPaths& paths,
                                 const AutostartOptions& options,
                                 absl::Time deadline) {
  if (SocketAnswers(paths.socket)) return false;
  absl::Status dir = MakePrivateDir(paths.cache_dir, /*parents=*/true);
  if (!dir.ok()) return dir;
  if (access(options.daemon_binary.c_str(), X_OK) != 0) {
    return ErrnoError(absl::StrCat("cannot run ", options.daemon_binary));
  }
  absl::StatusOr<pid_t> keeper = SpawnKeeper(paths, options);
  if (!keeper.ok()) return keeper.status();
  absl::Status up = AwaitSocket(paths, *keeper, deadline);
  if (!up.ok()) return up;
  return true;
}

// Whether `pid` is a live keeper (not a process that reused a stale pid).
bool IsKeeper(pid_t pid) {
  if (pid <= 0) return false;
  std::ifstream in(absl::StrCat("/proc/", pid, "/cmdline"));
  const std::string cmdline((std::istreambuf_iterator<char>(in)),
                            std::istreambuf_iterator<char>());
  return cmdline.find(std::string("--daemon-keeper\0", 16)) !=
         std::string::npos;
}

}  // namespace

UserDaemonPaths UserDaemonPathsFor(
    const std::function<const char*(const char*)>& env, uid_t uid,
    const std::string& home) {
  UserDaemonPaths p;
  const char* runtime = AbsoluteEnv(env, "XDG_RUNTIME_DIR");
  p.run_dir = runtime != nullptr ? absl::StrCat(runtime, "/tunedb")
                                 : absl::StrCat("/tmp/tunedb-", uid);
  const char* cache = AbsoluteEnv(env, "XDG_CACHE_HOME");
  const char* home_env = AbsoluteEnv(env, "HOME");
  p.cache_dir =
      cache != nullptr
          ? absl::StrCat(cache, "/tunedb")
          : absl::StrCat(home_env != nullptr ? home_env : home.c_str(),
                         "/.cache/tunedb");
  p.socket = p.run_dir + "/tunedbd.sock";
  p.start_lock = p.run_dir + "/start.lock";
  p.users_lock = p.run_dir + "/users.lock";
  p.pid_file = p.run_dir + "/tunedbd.pid";
  p.db = p.cache_dir + "/tunedb.db";
  p.log = p.cache_dir + "/tunedbd.log";
  return p;
}

UserDaemonPaths UserDaemonPathsFromEnv() {
  const passwd* pw = getpwuid(getuid());
  return UserDaemonPathsFor([](const char* name) { return std::getenv(name); },
                            getuid(), pw != nullptr ? pw->pw_dir : "/");
}

absl::Status MakePrivateDir(const std::string& dir, bool parents) {
  if (parents) {
    for (size_t slash = dir.find('/', 1); slash != std::string::npos;
         slash = dir.find('/', slash + 1)) {
      const std::string parent = dir.substr(0, slash);
      if (mkdir(parent.c_str(), 0700) != 0 && errno != EEXIST) {
        return ErrnoError(absl::StrCat("cannot make ", parent));
      }
    }
  }
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return ErrnoError(absl::StrCat("cannot make ", dir));
  }
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) {
    return ErrnoError(absl::StrCat("cannot read ", dir));
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
      (st.st_mode & 022) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        dir, " is not a folder of this user's that only it may write"));
  }
  return absl::OkStatus();
}

bool SocketAnswers(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const bool ok =
      connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

UserDaemonUse::UserDaemonUse(UserDaemonUse&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), started_(other.started_) {}

UserDaemonUse& UserDaemonUse::operator=(UserDaemonUse&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    started_ = other.started_;
  }
  return *this;
}

UserDaemonUse::~UserDaemonUse() {
  if (fd_ >= 0) close(fd_);
}

absl::StatusOr<UserDaemonUse> EnsureUserDaemon(
    const UserDaemonPaths& paths, const AutostartOptions& options) {
  if (paths.socket.size() >= sizeof(sockaddr_un::sun_path)) {
    return absl::FailedPreconditionError(
        absl::StrCat("the socket path ", paths.socket, " is too long"));
  }
  absl::Status dir = MakePrivateDir(paths.run_dir, /*parents=*/false);
  if (!dir.ok()) return dir;
  const absl::Time deadline = absl::Now() + options.start_wait;
  // Held from before the check, so the keeper never sees the daemon unused
  // between its start and the program's; a keeper stopping its daemon for
  // idleness holds it until the daemon is gone.
  const int users = LockFile(paths.users_lock, LOCK_SH, deadline);
  if (users < 0) {
    return ErrnoError(absl::StrCat("cannot lock ", paths.users_lock));
  }
  UserDaemonUse use(users);
  if (SocketAnswers(paths.socket)) return use;
  const int start = LockFile(paths.start_lock, LOCK_EX, deadline);
  if (start < 0) {
    return ErrnoError(absl::StrCat("cannot lock ", paths.start_lock));
  }
  absl::StatusOr<bool> started = StartLocked(paths, options, deadline);
  close(start);
  if (!started.ok()) return started.status();
  use.set_started(*started);
  return use;
}

UserDaemonState ReadUserDaemonState(const UserDaemonPaths& paths) {
  UserDaemonState s;
  s.answers = SocketAnswers(paths.socket);
  std::ifstream in(paths.pid_file);
  long keeper = 0, daemon = 0;
  if (in >> keeper >> daemon && IsKeeper(static_cast<pid_t>(keeper))) {
    s.keeper_pid = static_cast<pid_t>(keeper);
    s.daemon_pid = static_cast<pid_t>(daemon);
  }
  return s;
}

absl::Status StopUserDaemon(const UserDaemonPaths& paths, absl::Duration wait) {
  const UserDaemonState s = ReadUserDaemonState(paths);
  if (s.keeper_pid <= 0 || kill(s.keeper_pid, SIGTERM) != 0) {
    return absl::NotFoundError(
        absl::StrCat("no daemon started by tunedb run is running (no live "
                     "keeper in ",
                     paths.pid_file, ")"));
  }
  const absl::Time deadline = absl::Now() + wait;
  // The keeper removes the pid file once the daemon has exited.
  while (access(paths.pid_file.c_str(), F_OK) == 0) {
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("tunedbd (pid ", s.daemon_pid, ") is still stopping"));
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  return absl::OkStatus();
}

}  // namespace tunedb::tuner
