// DaemonAutostart: the daemon `tunedb run` starts for this user when none
// answers (docs/preload.md, "The daemon `tunedb run` starts"). Its files:
// the socket, a start lock, a users lock and a pid file in a private runtime
// folder ($XDG_RUNTIME_DIR/tunedb, else /tmp/tunedb-$UID, mode 0700 and
// owned by the user), the database and the daemon's log in
// $XDG_CACHE_HOME/tunedb (else ~/.cache/tunedb).
//
// Promises: of several `tunedb run`s starting at once, one starts the daemon
// (under an flock on the start lock) and the others wait for its socket to
// answer. The daemon runs under a keeper (`tunedb run --daemon-keeper`, a
// process of its own session) that stops it once it has been idle for the
// idle time (daemon_keeper.h).
//
// Thread safety: the functions may be called from any thread; UserDaemonUse
// is not thread-safe. Across processes, the locks above order everything.
#ifndef TUNEDB_TUNER_DAEMON_AUTOSTART_H_
#define TUNEDB_TUNER_DAEMON_AUTOSTART_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tunedb::tuner {

// How long an autostarted daemon stays up without use, by default.
inline constexpr double kDefaultIdleExitS = 600;

struct UserDaemonPaths {
  std::string run_dir;     // private: the socket and the locks
  std::string socket;      // run_dir/tunedbd.sock
  std::string start_lock;  // run_dir/start.lock
  std::string users_lock;  // run_dir/users.lock
  std::string pid_file;    // run_dir/tunedbd.pid: "KEEPER_PID DAEMON_PID"
  std::string cache_dir;
  std::string db;   // cache_dir/tunedb.db
  std::string log;  // cache_dir/tunedbd.log (the daemon's and the keeper's)

  std::string address() const { return "unix:" + socket; }
};

// The paths for the user `uid`, from the environment that `env` reads
// (XDG_RUNTIME_DIR, XDG_CACHE_HOME, HOME; a relative or empty value counts
// as unset); `home` is used when HOME is unset too. Nothing is created.
UserDaemonPaths UserDaemonPathsFor(
    const std::function<const char*(const char*)>& env, uid_t uid,
    const std::string& home);
// The same for this process's user and environment.
UserDaemonPaths UserDaemonPathsFromEnv();

// Makes `dir` (its parents too when `parents`) with mode 0700 if missing;
// FAILED_PRECONDITION unless it is then a folder owned by this user that
// no one else may enter or write.
absl::Status MakePrivateDir(const std::string& dir, bool parents);

// Whether something accepts connections on the Unix socket `path`.
bool SocketAnswers(const std::string& path);

struct AutostartOptions {
  std::string daemon_binary;            // tunedbd
  std::string keeper_binary;            // tunedb (this program)
  std::vector<std::string> cudnn_dirs;  // its --cudnn-lib-dir values
  double idle_exit_s = kDefaultIdleExitS;
  absl::Duration start_wait = absl::Seconds(30);
};

// While alive, a `tunedb run` uses the user's daemon: it holds the users
// lock shared, so the keeper does not stop the daemon under the program.
class UserDaemonUse {
 public:
  UserDaemonUse() = default;
  explicit UserDaemonUse(int users_lock_fd) : fd_(users_lock_fd) {}
  UserDaemonUse(UserDaemonUse&& other) noexcept;
  UserDaemonUse& operator=(UserDaemonUse&& other) noexcept;
  UserDaemonUse(const UserDaemonUse&) = delete;
  UserDaemonUse& operator=(const UserDaemonUse&) = delete;
  ~UserDaemonUse();

  bool started() const { return started_; }
  void set_started(bool started) { started_ = started; }

 private:
  int fd_ = -1;
  bool started_ = false;  // this call started the daemon
};

// Makes sure the user's daemon answers on paths.socket: uses the one that
// does, else (under the start lock) starts one through its keeper and waits
// for its socket. An error says in one sentence why no daemon answers
// (a folder that cannot be made or is not private, tunedbd missing, tunedbd
// exiting at start with its last log line, no answer within start_wait).
absl::StatusOr<UserDaemonUse> EnsureUserDaemon(const UserDaemonPaths& paths,
                                               const AutostartOptions& options);

struct UserDaemonState {
  bool answers = false;  // the socket accepts connections
  pid_t keeper_pid = 0;  // 0 when there is no pid file
  pid_t daemon_pid = 0;
};
UserDaemonState ReadUserDaemonState(const UserDaemonPaths& paths);

// Stops the user's daemon (SIGTERM to its keeper) and waits up to `wait`
// for it to be gone; NOT_FOUND if none is running, DEADLINE_EXCEEDED if it
// is still there after `wait`.
absl::Status StopUserDaemon(const UserDaemonPaths& paths, absl::Duration wait);

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_DAEMON_AUTOSTART_H_
