// DaemonKeeper: the process that runs the daemon `tunedb run` starts
// (`tunedb run --daemon-keeper`, in a session of its own, its output in the
// daemon's log) and stops it once it has been idle for the idle time: no
// `tunedb run` holding the users lock (each holds it shared while its
// program runs), no request served and no search queued. It holds the
// users lock while it stops the daemon, so a `tunedb run` starting then
// waits for it to be gone and starts another.
//
// Thread safety: RunDaemonKeeper installs signal handlers and is called
// once per process; IdleClock is not thread-safe.
#ifndef TUNEDB_TUNER_DAEMON_KEEPER_H_
#define TUNEDB_TUNER_DAEMON_KEEPER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tuner/daemon_autostart.h"

namespace tunedb::tuner {

// The keeper's part: starts `daemon_argv`, writes the pid file, and stops
// the daemon (SIGTERM, then waits) when it has been idle for idle_exit_s or
// when the keeper gets SIGTERM, SIGINT or SIGHUP; removes the pid file and
// returns the daemon's exit code. Writes what it does to stderr (the log).
int RunDaemonKeeper(const UserDaemonPaths& paths, double idle_exit_s,
                    std::vector<std::string> daemon_argv);

// The keeper's measure of idleness. A daemon is in use while a program runs
// under `tunedb run` or its served-request count moves or a search is
// queued; it is idle for as long as none of that has happened.
class IdleClock {
 public:
  IdleClock(absl::Time start, absl::Duration limit)
      : last_use_(start), limit_(limit) {}

  // One look at the daemon at `now`: whether a `tunedb run` holds it,
  // its count of served requests and its queued searches (-1: the daemon
  // did not answer; that alone is neither use nor idleness).
  void Observe(absl::Time now, bool held, int64_t served, int64_t queued);
  bool Expired(absl::Time now) const { return now - last_use_ >= limit_; }
  absl::Time last_use() const { return last_use_; }

 private:
  absl::Time last_use_;
  absl::Duration limit_;
  int64_t last_served_ = -1;
};

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_DAEMON_KEEPER_H_
