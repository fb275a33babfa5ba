#include "tuner/cudnn_locator.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

extern char** environ;

namespace tunedb::tuner {
namespace {

constexpr size_t kMaxOutputBytes = 1 << 20;

// Reads `fd` until EOF, `deadline` or kMaxOutputBytes; false on timeout.
bool ReadUntil(int fd, absl::Time deadline, std::string* out) {
  char buf[4096];
  while (out->size() < kMaxOutputBytes) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1,
                           static_cast<int>(absl::ToInt64Milliseconds(
                               left + absl::Milliseconds(1))));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    out->append(buf, static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

bool IsPythonInterpreter(absl::string_view program) {
  const size_t slash = program.rfind('/');
  absl::string_view name =
      slash == absl::string_view::npos ? program : program.substr(slash + 1);
  if (!absl::ConsumePrefix(&name, "python")) return false;
  if (name.empty() || name == "3") return true;
  if (!absl::ConsumePrefix(&name, "3.")) return false;
  size_t digits = 0;
  while (digits < name.size() && absl::ascii_isdigit(name[digits])) ++digits;
  if (digits == 0) return false;
  // A build suffix: "d" (debug), "t" (free-threaded), "m".
  for (char c : name.substr(digits)) {
    if (c != 'd' && c != 't' && c != 'm') return false;
  }
  return true;
}

std::string CudnnDirInLibraryPath(
    absl::string_view ld_library_path,
    const std::function<bool(const std::string&)>& has_cudnn) {
  for (absl::string_view dir :
       absl::StrSplit(ld_library_path, ':', absl::SkipEmpty())) {
    std::string d(dir);
    if (has_cudnn(d)) return d;
  }
  return "";
}

std::string CudnnDirInLdconfig(absl::string_view ldconfig_output) {
  std::string best;
  int best_major = -1;
  for (absl::string_view line : absl::StrSplit(ldconfig_output, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, "libcudnn.so.")) continue;
    const size_t space = line.find(' ');
    const size_t arrow = line.find("=> ");
    if (space == absl::string_view::npos || arrow == absl::string_view::npos) {
      continue;
    }
    int major = 0;
    if (!absl::SimpleAtoi(line.substr(0, space), &major)) continue;
    absl::string_view path = line.substr(arrow + 3);
    const size_t slash = path.rfind('/');
    if (slash == absl::string_view::npos || major <= best_major) continue;
    best_major = major;
    best = std::string(slash == 0 ? "/" : path.substr(0, slash));
  }
  return best;
}

bool DirHoldsCudnn(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return false;
  bool found = false;
  while (dirent* e = readdir(d)) {
    const absl::string_view name(e->d_name);
    if (name == "libcudnn.so" || absl::StartsWith(name, "libcudnn.so.")) {
      found = true;
      break;
    }
  }
  closedir(d);
  return found;
}

std::string OutputOf(const std::vector<std::string>& argv, double timeout_s) {
  if (argv.empty()) return "";
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return "";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null",
                                   O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
  std::vector<std::string> args = argv;
  std::vector<char*> cargs;
  for (std::string& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  pid_t pid = -1;
  const int rc =
      posix_spawnp(&pid, cargs[0], &actions, nullptr, cargs.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  std::string out;
  const bool done =
      rc == 0 &&
      ReadUntil(pipe_fds[0], absl::Now() + absl::Seconds(timeout_s), &out);
  close(pipe_fds[0]);
  if (rc != 0) return "";
  if (!done) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const bool ok = done && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return ok ? out : "";
}

std::string LocateCudnnDir(const std::vector<std::string>& command,
                           double timeout_s) {
  if (!command.empty() && IsPythonInterpreter(command.front())) {
    std::string dir(absl::StripAsciiWhitespace(
        OutputOf({command.front(), "-c", kPythonCudnnProbe}, timeout_s)));
    const size_t newline = dir.find('\n');
    if (newline != std::string::npos) dir.resize(newline);
    if (!dir.empty() && DirHoldsCudnn(dir)) return dir;
  }
  const char* path = std::getenv("LD_LIBRARY_PATH");
  if (path != nullptr) {
    std::string dir = CudnnDirInLibraryPath(path, DirHoldsCudnn);
    if (!dir.empty()) return dir;
  }
  for (const char* ldconfig : {"/sbin/ldconfig", "ldconfig"}) {
    std::string out = OutputOf({ldconfig, "-p"}, timeout_s);
    if (!out.empty()) return CudnnDirInLdconfig(out);
  }
  return "";
}

}  // namespace tunedb::tuner
