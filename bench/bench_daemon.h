// The benchmarks' way to run the real programs: a program started with its
// output in files, waited for, its peak memory read; tunedbd (simulated
// finder) started on a database file and waited for until `tunedb devices`
// answers on its socket, and stopped. For the benchmarks that measure the
// daemon on a large database (bench/store/import_rss_bench,
// bench/report/report_daemon_bench).
//
// Thread safety: free functions; a Daemon belongs to its caller.
#ifndef TUNEDB_BENCH_BENCH_DAEMON_H_
#define TUNEDB_BENCH_BENCH_DAEMON_H_

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

extern char** environ;

namespace tunedb::bench {

using Clock = std::chrono::steady_clock;

inline double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// 0 where `path` is not there.
inline int64_t FileSize(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

// Starts `args` (args[0] a path) with no input and its output and errors
// written to the files `out` and `err` (replaced); -1 where it could not.
inline pid_t Spawn(const std::vector<std::string>& args, const std::string& out,
                   const std::string& err) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> argv;
  for (const std::string& a : args) {
    argv.push_back(const_cast<char*>(a.c_str()));
  }
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) !=
      0) {
    pid = -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// The exit status of `pid` once it ends (128 + the signal that ended it).
inline int Wait(pid_t pid) {
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The peak resident memory (VmHWM) of a running process, in MiB; -1 where
// it cannot be read.
inline double PeakRssMib(pid_t pid) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) != 0) continue;
    std::string digits;
    for (char c : line) {
      if (c >= '0' && c <= '9') digits += c;
    }
    int64_t kib = 0;
    if (absl::SimpleAtoi(digits, &kib)) return kib / 1024.0;
  }
  return -1;
}

struct Daemon {
  pid_t pid = -1;  // -1: it did not start
  std::string address;
  double startup_s = 0;  // until its first answer
};

// tunedbd from `bin` (simulated finder) on the database `db`, listening on
// `work`/tunedb.sock, its output in `work`/tunedbd.out and .log, once
// `tunedb devices` answers; `extra` are more of its flags.
inline Daemon StartDaemon(const std::string& bin, const std::string& db,
                          const std::string& work,
                          const std::vector<std::string>& extra = {}) {
  Daemon d;
  const std::string socket = work + "/tunedb.sock";
  unlink(socket.c_str());  // a previous daemon's
  d.address = "unix:" + socket;
  std::vector<std::string> args = {bin + "/tunedbd", "--finder", "simulated",
                                   "--db", db, "--socket", socket};
  args.insert(args.end(), extra.begin(), extra.end());
  const Clock::time_point start = Clock::now();
  d.pid = Spawn(args, work + "/tunedbd.out", work + "/tunedbd.log");
  while (d.pid > 0 && Seconds(start) < 600) {
    // The socket first (a client that finds none backs off for a second).
    if (access(socket.c_str(), F_OK) != 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    if (Wait(Spawn({bin + "/tunedb", "--address", d.address, "--timeout", "1",
                    "devices"},
                   "/dev/null", "/dev/null")) == 0) {
      d.startup_s = Seconds(start);
      return d;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  d.pid = -1;
  return d;
}

// Stops `d` (SIGTERM) and waits for it.
inline void StopDaemon(Daemon& d) {
  if (d.pid <= 0) return;
  kill(d.pid, SIGTERM);
  Wait(d.pid);
  d.pid = -1;
}

}  // namespace tunedb::bench

#endif  // TUNEDB_BENCH_BENCH_DAEMON_H_
