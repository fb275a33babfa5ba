#include "server/worker/worker_supervisor.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "common/status_macros.h"
#include "server/worker/worker_command.h"
#include "proto/convert.h"
#include "server/worker/worker_protocol.h"

extern char** environ;

namespace tunedb {
namespace {

struct Process {
  pid_t pid = -1;
  int fd = -1;
};

// Starts `path args...` with the socket as fd 3, stdout sent to stderr, stdin
// from /dev/null, default signal dispositions, an empty signal mask, its own
// process group, and LD_LIBRARY_PATH=<lib_dir>:<inherited> when lib_dir is set.
absl::StatusOr<Process> Spawn(const std::string& path,
                              const std::vector<std::string>& args,
                              const std::string& lib_dir) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return absl::InternalError(
        absl::StrCat("socketpair: ", std::strerror(errno)));
  }
  std::vector<std::string> env;
  bool replaced = false;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry = *e;
    if (!lib_dir.empty() && absl::StartsWith(entry, "LD_LIBRARY_PATH=")) {
      const std::string old = entry.substr(16);
      entry = absl::StrCat("LD_LIBRARY_PATH=", lib_dir, old.empty() ? "" : ":",
                           old);
      replaced = true;
    }
    env.push_back(std::move(entry));
  }
  if (!lib_dir.empty() && !replaced) {
    env.push_back(absl::StrCat("LD_LIBRARY_PATH=", lib_dir));
  }
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_s;
  argv_s.push_back(path);
  for (const std::string& a : args) argv_s.push_back(a);
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 3);
  posix_spawn_file_actions_adddup2(&fa, 2, 1);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF |
                                      POSIX_SPAWN_SETPGROUP);
  pid_t pid = -1;
  const int rc =
      ::posix_spawn(&pid, path.c_str(), &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(sv[1]);
  if (rc != 0) {
    ::close(sv[0]);
    return absl::UnavailableError(
        absl::StrCat("posix_spawn ", path, ": ", std::strerror(rc)));
  }
  return Process{pid, sv[0]};
}

std::string DescribeWait(int wstatus) {
  if (WIFSIGNALED(wstatus)) {
    const int sig = WTERMSIG(wstatus);
    return absl::StrCat("killed by signal ", sig, " (", ::strsignal(sig), ")");
  }
  if (WIFEXITED(wstatus)) {
    return absl::StrCat("exited with status ", WEXITSTATUS(wstatus));
  }
  return absl::StrCat("ended (wait status ", wstatus, ")");
}

// Closes the socket and reaps the process, killing it first if `kill` is set
// or if it has not exited after `grace`. Returns how it ended.
std::string Reap(Process& p, bool kill, absl::Duration grace) {
  if (p.fd >= 0) ::close(p.fd);
  p.fd = -1;
  if (p.pid <= 0) return "not running";
  if (kill) ::kill(p.pid, SIGKILL);
  const absl::Time deadline = absl::Now() + grace;
  int wstatus = 0;
  std::string how;
  while (true) {
    const pid_t r = ::waitpid(p.pid, &wstatus, WNOHANG);
    if (r == p.pid) {
      how = DescribeWait(wstatus);
      break;
    }
    if (r < 0 && errno != EINTR) {
      how = absl::StrCat("ended (waitpid: ", std::strerror(errno), ")");
      break;
    }
    if (absl::Now() >= deadline) {
      ::kill(p.pid, SIGKILL);
      while (::waitpid(p.pid, &wstatus, 0) < 0 && errno == EINTR) {
      }
      how = absl::StrCat(DescribeWait(wstatus), " after ",
                         absl::FormatDuration(grace), " grace");
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  p.pid = -1;
  return how;
}

// Reads the hello a worker sends once started.
absl::StatusOr<worker::Response> AwaitHello(Process& p, absl::Duration timeout,
                                            const std::string& what) {
  worker::Response hello;
  absl::Status s = ReadFrame(p.fd, &hello, absl::Now() + timeout);
  if (!s.ok()) {
    const bool timed_out = absl::IsDeadlineExceeded(s);
    const std::string how = Reap(p, timed_out, absl::Seconds(2));
    return absl::UnavailableError(absl::StrCat(
        what, " did not start: ", s.message(), " (worker ", how, ")"));
  }
  absl::Status st = GetStatus(hello);
  if (!st.ok()) {
    Reap(p, false, absl::Seconds(2));
    return absl::Status(st.code(),
                        absl::StrCat(what, " failed to start: ", st.message()));
  }
  return hello;
}

// The command line of the worker for CUDA device `ordinal` (-1: listing).
std::vector<std::string> WorkerArgs(const WorkerSupervisor::Options& options,
                                    int ordinal) {
  WorkerCommand command;
  command.finder = options.worker_finder;
  command.simulated = options.simulated_options;
  command.device = ordinal;
  return command.ToArgs();
}

// Starts one device-listing worker per library folder in `dirs`, all at
// once, and returns the devices each listed.
absl::StatusOr<std::vector<std::vector<DeviceInfo>>> ListDevices(
    const WorkerSupervisor::Options& options,
    const std::vector<std::string>& dirs) {
  std::vector<Process> listers;
  for (const std::string& dir : dirs) {
    ASSIGN_OR_RETURN(Process p,
                     Spawn(options.worker_path, WorkerArgs(options, -1), dir));
    listers.push_back(p);
  }
  std::vector<std::vector<DeviceInfo>> listed(dirs.size());
  absl::Status first_error;
  for (size_t i = 0; i < dirs.size(); ++i) {
    const std::string what =
        dirs[i].empty() ? std::string("device-listing worker")
                        : absl::StrCat("device-listing worker for ", dirs[i]);
    absl::StatusOr<worker::Response> hello =
        AwaitHello(listers[i], options.start_timeout, what);
    if (!hello.ok()) {
      if (first_error.ok()) first_error = hello.status();
      continue;
    }
    for (const worker::DeviceInfo& d : hello->devices()) {
      absl::StatusOr<DeviceInfo> info = FromProto(d);
      if (!info.ok()) {
        if (first_error.ok()) first_error = info.status();
        continue;
      }
      listed[i].push_back(*std::move(info));
    }
    Reap(listers[i], false, absl::Seconds(5));
  }
  RETURN_IF_ERROR(first_error);
  return listed;
}

// A search request for the worker: `problem` and what `options` tell it.
worker::Request SearchRequest(uint64_t id, const ConvProblem& problem,
                              const SearchOptions& options) {
  worker::Request request;
  request.set_id(id);
  request.set_problem(problem.ToText());
  request.set_workspace_cap_bytes(options.workspace_cap_bytes);
  request.set_timeout_ms(absl::ToInt64Milliseconds(options.timeout));
  for (const AlgoResult& r : options.stored_plans) {
    ToProto(r, request.add_stored_plans());
  }
  for (const AlgoResult& r : options.retime_only) {
    ToProto(r, request.add_retime_only());
  }
  for (AlgoResult r : options.far_behind) {
    r.plan.clear();  // the worker needs the config only
    ToProto(r, request.add_far_behind());
  }
  return request;
}

}  // namespace

struct WorkerSupervisor::Worker {
  // Set before the supervisor is shared, then only read.
  std::string lib_dir;
  int ordinal = 0;
  int index = 0;  // the device index
  DeviceInfo info;

  // The process and its bookkeeping; held for a whole search, so searches
  // on one device run one at a time.
  mutable absl::Mutex mu;
  Process proc ABSL_GUARDED_BY(mu);
  uint64_t next_id ABSL_GUARDED_BY(mu) = 1;
  int restarts ABSL_GUARDED_BY(mu) = 0;
  Supervision supervision ABSL_GUARDED_BY(mu);

  std::string Name() const {
    return absl::StrCat("worker for device ", index, " (ordinal ", ordinal,
                        lib_dir.empty() ? "" : ", cuDNN dir ", lib_dir, ")");
  }

  // (Re)starts the worker; "" on success, else why not.
  std::string Restart(const Options& options)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    absl::StatusOr<Process> p =
        Spawn(options.worker_path, WorkerArgs(options, ordinal), lib_dir);
    if (!p.ok()) return std::string(p.status().message());
    proc = *p;
    absl::StatusOr<worker::Response> hello =
        AwaitHello(proc, options.start_timeout, Name());
    if (!hello.ok()) return std::string(hello.status().message());
    ++restarts;
    ++supervision.starts;
    return "";
  }

  // Restarts the worker after it ended; says how, to end an error message.
  std::string RestartNote(const Options& options)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    const std::string why = Restart(options);
    return why.empty() ? std::string("; restarted")
                       : absl::StrCat("; restart failed: ", why);
  }

  // Reads the answer to request `id`, sent to process `pid`, until
  // `timeout` has passed since it was sent.
  absl::StatusOr<SearchResult> AwaitAnswer(const Options& options,
                                           uint64_t id, pid_t pid,
                                           absl::Duration timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
};

absl::StatusOr<SearchResult> WorkerSupervisor::Worker::AwaitAnswer(
    const Options& options, uint64_t id, pid_t pid, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    worker::Response response;
    absl::Status s = ReadFrame(proc.fd, &response, deadline);
    if (absl::IsDeadlineExceeded(s)) {
      Reap(proc, true, absl::Seconds(2));
      ++supervision.exits["timeout"];
      return absl::DeadlineExceededError(absl::StrCat(
          "search on device ", index, " exceeded its timeout of ",
          absl::FormatDuration(timeout), "; worker pid ", pid,
          " killed (SIGKILL)", RestartNote(options)));
    }
    if (!s.ok()) {
      // End of file or a broken frame: the worker died (or is unusable).
      const std::string how =
          Reap(proc, !absl::IsOutOfRange(s), absl::Seconds(5));
      ++supervision.exits["died"];
      return absl::UnavailableError(absl::StrCat(
          Name(), " (pid ", pid, ") ", how, " during the search (",
          s.message(), ")", RestartNote(options)));
    }
    if (response.id() != id) continue;  // stale answer
    if (response.fatal()) {
      const std::string how = Reap(proc, false, absl::Seconds(5));
      ++supervision.exits["fatal_error"];
      absl::Status st = GetStatus(response);
      return absl::UnavailableError(absl::StrCat(st.message(), " [", Name(),
                                                 " (pid ", pid, ") ", how,
                                                 RestartNote(options), "]"));
    }
    RETURN_IF_ERROR(GetStatus(response));
    return FromProto(response);
  }
}

WorkerSupervisor::WorkerSupervisor(const Options& options)
    : options_(options) {}

WorkerSupervisor::~WorkerSupervisor() {
  for (auto& w : workers_) {
    absl::MutexLock lock(&w->mu);
    Reap(w->proc, false, absl::Seconds(5));
  }
}

absl::StatusOr<std::unique_ptr<WorkerSupervisor>> WorkerSupervisor::Create(
    const Options& given) {
  Options options = given;
  if (options.worker_path.empty()) options.worker_path = DefaultWorkerPath();
  if (::access(options.worker_path.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("worker program ", options.worker_path,
                     " is not executable: ", std::strerror(errno)));
  }
  if (options.worker_finder != "cudnn" &&
      options.worker_finder != "simulated") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown worker finder '", options.worker_finder, "'"));
  }
  std::vector<std::string> dirs = options.library_dirs;
  if (dirs.empty()) dirs.push_back("");

  std::unique_ptr<WorkerSupervisor> supervisor(new WorkerSupervisor(options));
  // 1. One listing worker per library folder, all started at once.
  ASSIGN_OR_RETURN(std::vector<std::vector<DeviceInfo>> listed,
                   ListDevices(options, dirs));

  // 2. One worker per (folder, device), all started at once.
  for (size_t i = 0; i < dirs.size(); ++i) {
    for (const DeviceInfo& d : listed[i]) {
      auto w = std::make_unique<Worker>();
      w->lib_dir = dirs[i];
      w->ordinal = d.ordinal;
      w->index = static_cast<int>(supervisor->workers_.size());
      supervisor->workers_.push_back(std::move(w));
    }
  }
  if (supervisor->workers_.empty()) {
    return absl::UnavailableError("the workers found no device");
  }
  for (auto& w : supervisor->workers_) {
    absl::MutexLock lock(&w->mu);
    ASSIGN_OR_RETURN(w->proc,
                     Spawn(options.worker_path, WorkerArgs(options, w->ordinal),
                           w->lib_dir));
  }
  for (auto& w : supervisor->workers_) {
    absl::MutexLock lock(&w->mu);
    ASSIGN_OR_RETURN(worker::Response hello,
                     AwaitHello(w->proc, options.start_timeout, w->Name()));
    if (hello.devices_size() != 1) {
      return absl::InternalError(absl::StrCat(
          w->Name(), " reported ", hello.devices_size(), " devices, not 1"));
    }
    ASSIGN_OR_RETURN(w->info, FromProto(hello.devices(0)));
    w->supervision.starts = 1;
    supervisor->devices_.push_back(w->info);
  }
  return supervisor;
}

absl::StatusOr<std::vector<DeviceInfo>> WorkerSupervisor::Devices() {
  return devices_;
}

pid_t WorkerSupervisor::worker_pid(int device_index) const {
  if (device_index < 0 || device_index >= static_cast<int>(workers_.size())) {
    return -1;
  }
  absl::MutexLock lock(&workers_[device_index]->mu);
  return workers_[device_index]->proc.pid;
}

int WorkerSupervisor::restarts(int device_index) const {
  if (device_index < 0 || device_index >= static_cast<int>(workers_.size())) {
    return 0;
  }
  absl::MutexLock lock(&workers_[device_index]->mu);
  return workers_[device_index]->restarts;
}

WorkerSupervisor::Supervision WorkerSupervisor::supervision(
    int device_index) const {
  if (device_index < 0 || device_index >= static_cast<int>(workers_.size())) {
    return {};
  }
  absl::MutexLock lock(&workers_[device_index]->mu);
  return workers_[device_index]->supervision;
}

std::string WorkerSupervisor::library_dir(int device_index) const {
  if (device_index < 0 || device_index >= static_cast<int>(workers_.size())) {
    return "";
  }
  return workers_[device_index]->lib_dir;
}

absl::StatusOr<SearchResult> WorkerSupervisor::Search(
    int device_index, const ConvProblem& problem,
    const SearchOptions& options) {
  if (device_index < 0 || device_index >= static_cast<int>(workers_.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("device index ", device_index, " out of range (",
                     workers_.size(), " devices)"));
  }
  Worker& w = *workers_[device_index];
  absl::MutexLock lock(&w.mu);
  if (w.proc.pid <= 0) {
    const std::string why = w.Restart(options_);
    if (!why.empty()) {
      return absl::UnavailableError(
          absl::StrCat(w.Name(), " is not running: ", why));
    }
  }
  const pid_t pid = w.proc.pid;
  const worker::Request request =
      SearchRequest(w.next_id++, problem, options);
  absl::Status s = WriteFrame(w.proc.fd, request);
  if (!s.ok()) {
    const std::string how = Reap(w.proc, true, absl::Seconds(2));
    ++w.supervision.exits["died"];
    return absl::UnavailableError(
        absl::StrCat(w.Name(), " (pid ", pid, ") ", how,
                     " before the search: ", s.message(),
                     w.RestartNote(options_)));
  }
  return w.AwaitAnswer(options_, request.id(), pid, options.timeout);
}

}  // namespace tunedb
