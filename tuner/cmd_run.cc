// `tunedb run [--] CMD...`: runs an unmodified program with
// libtunedb_preload.so in LD_PRELOAD (put first, before any the caller
// already had) and the daemon address in TUNEDB_ADDRESS, so its legacy cuDNN
// Find/Get_v7 calls are answered from tunedb (docs/preload.md). Returns the
// program's exit code (128 + N when it dies of signal N; 127 when it cannot
// be started). With --tune-after, the program's misses are not tuned while
// it runs (the preload appends their keys to a file instead,
// TUNEDB_PRELOAD_MISSES_FILE); once it has exited, they are tuned through
// the daemon as `tunedb prewarm` tunes a key file, so no search shares the
// GPU with the program. With --pin FILE (docs/pins.md), the program's
// answers are recorded into FILE if there is none yet, and followed from it
// (no daemon) if there is: a pin that cannot be read is refused before the
// program starts (exit kPinRefusedExitCode), one made for another device
// by the preload once the program's first convolution shows the device.
// Without an explicit address (--address, TUNEDB_ADDRESS) and with no
// daemon on the default socket, it uses the user's own daemon, starting
// one if none answers (daemon_autostart.h); --daemon-status and
// --daemon-stop show and stop that daemon. An invalid --job is refused
// before the program starts (exit 2).
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/job_id.h"
#include "common/pin_file.h"
#include "tuner/commands.h"
#include "tuner/cudnn_locator.h"
#include "tuner/daemon_autostart.h"
#include "tuner/daemon_keeper.h"
#include "tuner/exit_codes.h"
#include "tuner/prewarm_runner.h"
#include "tuner/shape_file.h"

extern char** environ;

namespace tunedb::tuner {
namespace {

constexpr const char* kPreloadName = "libtunedb_preload.so";

struct RunFlags {
  std::string preload;  // "" = found beside the tunedb binary
  std::string log;      // TUNEDB_PRELOAD_LOG; "" = the preload's default
  std::string db;       // TUNEDB_PRELOAD_DB
  double exit_wait_s = -1;
  bool report = false;  // TUNEDB_PRELOAD_REPORT=1
  bool tune_after = false;
  std::string pin;           // TUNEDB_PIN; "" = no pin
  bool repin = false;        // record the pin again
  std::string pin_mismatch;  // TUNEDB_PIN_MISMATCH; "" = refuse
  bool deterministic = false;
  std::string job;  // TUNEDB_JOB; "" = the preload's default
  // The user's own daemon (daemon_autostart.h).
  bool address_given = false;  // --address or TUNEDB_ADDRESS: never replaced
  bool no_autostart = false;
  std::string daemon_binary;  // "" = tunedbd beside the tunedb binary
  double idle_exit_s = kDefaultIdleExitS;
  bool daemon_status = false;
  bool daemon_stop = false;
  bool daemon_keeper = false;  // hidden: be the daemon's keeper
  std::vector<std::string> command;
};

// TUNEDB_PIN_MODE for --pin: "follow" an existing pin (checked here first),
// "record" a new one (--repin: the old one moved to FILE.old); "" after
// printing why the pin is refused (*code set).
std::string PinMode(CliContext& ctx, const RunFlags& f, int* code) {
  if (f.repin) {
    if (rename(f.pin.c_str(), (f.pin + ".old").c_str()) == 0) {
      ctx.err() << "tunedb run: the old pin is " << f.pin << ".old\n";
    } else if (errno != ENOENT) {
      ctx.err() << "tunedb run: cannot move the old pin aside: "
                << strerror(errno) << "\n";
      *code = kExitError;
      return "";
    }
  }
  absl::StatusOr<PinFile> pin = ReadPinFile(f.pin);
  if (absl::IsNotFound(pin.status())) {
    ctx.err() << "tunedb run: recording the program's answers into the pin "
              << f.pin << "\n";
    return "record";
  }
  if (!pin.ok()) {
    ctx.err() << "tunedb run: refusing the pin: " << pin.status().message()
              << " (remake it with --repin)\n";
    *code = kExitPinRefused;
    return "";
  }
  ctx.err() << "tunedb run: following the pin " << f.pin << " ("
            << pin->entries.size() << " answers, " << pin->device.gpu_model
            << ", cuDNN " << CudnnVersionText(pin->device.cudnn_version)
            << (pin->deterministic ? ", deterministic" : "") << ")\n";
  if (std::string w = UnsealedPinWarning(*pin, f.pin); !w.empty()) {
    ctx.err() << "tunedb run: " << w << "\n";
  }
  return "follow";
}

// After a recording run that exited `code`: `code`, or kExitNotWritten
// where the program succeeded but no readable pin is at f.pin (its write
// failed, or the program asked tunedb nothing), said in one line.
int CheckRecorded(CliContext& ctx, const RunFlags& f, int code) {
  absl::StatusOr<PinFile> pin = ReadPinFile(f.pin);
  if (pin.ok() || code != kExitOk) return code;
  ctx.err() << "tunedb run: the pin " << f.pin << " was NOT recorded: "
            << pin.status().message() << "\n";
  return kExitNotWritten;
}

// A new empty file for the program's misses (TUNEDB_PRELOAD_MISSES_FILE),
// in $TMPDIR or /tmp; "" if none could be made.
std::string MakeMissesFile() {
  const char* tmp = std::getenv("TMPDIR");
  std::string path = absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp",
                                  "/tunedb-run-misses-XXXXXX");
  const int fd = mkstemp(path.data());
  if (fd < 0) return "";
  close(fd);
  return path;
}

// Tunes the keys the program's processes wrote to `path`, each once, then
// removes the file. Says what it did on stderr; never changes the
// program's exit code.
void TuneMisses(CliContext& ctx, const std::string& path) {
  std::ifstream in(path);
  ShapeFileResult r =
      ParseShapeFile("misses", in, ShapeFormat::kKeyText, ProblemOptions{});
  in.close();
  unlink(path.c_str());
  for (const std::string& e : r.errors) {
    ctx.err() << "tunedb run: a missed key could not be read: " << e << "\n";
  }
  // The processes of one program (ranks, workers) miss the same keys.
  std::vector<PrewarmItem> items;
  std::set<std::string> seen;
  for (const ShapeEntry& e : r.entries) {
    if (!e.device.has_value()) continue;
    const ProblemKey key{*e.device, e.problem};
    if (seen.insert(key.ToText()).second) items.push_back({key, "run"});
  }
  if (items.empty()) return;
  ctx.err() << "tunedb run: tuning the " << items.size()
            << " problems the program missed\n";
  const absl::Time start = absl::Now();
  PrewarmOptions options;
  options.progress = false;
  absl::StatusOr<PrewarmSummary> s = RunPrewarm(ctx, items, options);
  if (!s.ok()) {
    ctx.err() << "tunedb run: the missed problems were not tuned: "
              << s.status().message() << "\n";
    return;
  }
  ctx.err() << "tunedb run: " << s->searched << " searched, "
            << s->already_stored << " already stored, " << s->failed
            << " failed, in "
            << absl::FormatDuration(
                   absl::Trunc(absl::Now() - start, absl::Milliseconds(100)))
            << "\n";
}

std::string ExecutableDir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  std::string path(buf, static_cast<size_t>(n));
  return path.substr(0, path.rfind('/'));
}

// The preload beside the binary, in ../lib (a bundle, the build tree) or in
// the install's library folder; "" if none is there.
std::string FindPreload() {
  const std::string dir = ExecutableDir();
  if (dir.empty()) return "";
  for (const std::string& candidate :
       {absl::StrCat(dir, "/", kPreloadName),
        absl::StrCat(dir, "/../lib/", kPreloadName),
        absl::StrCat(dir, "/../", TUNEDB_INSTALL_LIBDIR, "/", kPreloadName)}) {
    if (access(candidate.c_str(), R_OK) == 0) return candidate;
  }
  return "";
}

pid_t child_pid = -1;

void ForwardSignal(int sig) {
  if (child_pid > 0) kill(child_pid, sig);
}

// The preload to put in LD_PRELOAD, as an absolute path (the program may
// change its working folder before it starts others); "" after printing why
// there is none.
std::string ResolvePreload(CliContext& ctx, const RunFlags& f) {
  std::string preload = f.preload.empty() ? FindPreload() : f.preload;
  if (preload.empty() || access(preload.c_str(), R_OK) != 0) {
    ctx.err() << "tunedb run: cannot find " << kPreloadName
              << (f.preload.empty() ? " beside the tunedb binary"
                                    : absl::StrCat(" at ", f.preload))
              << " (use --preload PATH)\n";
    return "";
  }
  char resolved[PATH_MAX];
  if (realpath(preload.c_str(), resolved) != nullptr) preload = resolved;
  return preload;
}

// The program's environment: ours with the preload's variables set (the
// preload put first in LD_PRELOAD).
std::vector<std::string> ProgramEnvironment(CliContext& ctx, const RunFlags& f,
                                            const std::string& preload,
                                            const std::string& misses_file,
                                            const std::string& pin_mode) {
  std::vector<std::string> env;
  const char* existing = std::getenv("LD_PRELOAD");
  env.push_back(absl::StrCat("LD_PRELOAD=", preload,
                             existing != nullptr && *existing != '\0'
                                 ? absl::StrCat(":", existing)
                                 : ""));
  env.push_back("TUNEDB_ADDRESS=" + ctx.options().address);
  if (!f.log.empty()) env.push_back("TUNEDB_PRELOAD_LOG=" + f.log);
  if (!f.db.empty()) env.push_back("TUNEDB_PRELOAD_DB=" + f.db);
  if (f.exit_wait_s >= 0) {
    env.push_back(absl::StrCat("TUNEDB_PRELOAD_EXIT_WAIT_S=", f.exit_wait_s));
  }
  if (f.report) env.push_back("TUNEDB_PRELOAD_REPORT=1");
  if (!misses_file.empty()) {
    env.push_back("TUNEDB_PRELOAD_MISSES_FILE=" + misses_file);
  }
  if (!f.job.empty()) env.push_back("TUNEDB_JOB=" + f.job);
  if (!pin_mode.empty()) {
    // Absolute (a pin to record does not exist yet): the program may
    // change its working folder.
    std::string pin = f.pin;
    char cwd[PATH_MAX];
    if (!pin.empty() && pin[0] != '/' && getcwd(cwd, sizeof(cwd)) != nullptr) {
      pin = absl::StrCat(cwd, "/", pin);
    }
    env.push_back("TUNEDB_PIN=" + pin);
    env.push_back("TUNEDB_PIN_MODE=" + pin_mode);
    if (!f.pin_mismatch.empty()) {
      env.push_back("TUNEDB_PIN_MISMATCH=" + f.pin_mismatch);
    }
    if (f.deterministic) env.push_back("TUNEDB_PIN_DETERMINISTIC=on");
  }
  auto replaced = [&](const char* entry) {
    const std::string e(entry);
    for (const std::string& mine : env) {
      if (e.compare(0, mine.find('=') + 1, mine, 0, mine.find('=') + 1) == 0) {
        return true;
      }
    }
    return false;
  };
  for (char** e = environ; *e != nullptr; ++e) {
    if (!replaced(*e)) env.push_back(*e);
  }
  return env;
}

// This process's environment, unchanged (a program run without tunedb).
std::vector<std::string> PlainEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
  return env;
}

// Starts `command` with `env` and waits for it; its exit code (128 + N for
// signal N, 127 if it cannot be started).
int SpawnAndWait(CliContext& ctx, std::vector<std::string> command,
                 std::vector<std::string> env) {
  std::vector<char*> envp, argv;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  for (std::string& a : command) argv.push_back(a.data());
  argv.push_back(nullptr);

  // Like system(): the terminal's SIGINT/SIGQUIT reach the child directly;
  // SIGTERM and SIGHUP sent to tunedb are passed on to it.
  struct sigaction ignore {
  }, forward{}, old_int{}, old_quit{}, old_term{}, old_hup{};
  ignore.sa_handler = SIG_IGN;
  forward.sa_handler = ForwardSignal;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  sigaction(SIGTERM, &forward, &old_term);
  sigaction(SIGHUP, &forward, &old_hup);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGQUIT);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int rc =
      posix_spawnp(&pid, argv[0], nullptr, &attr, argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  int code = 127;
  if (rc != 0) {
    ctx.err() << "tunedb run: cannot start " << command.front() << ": "
              << strerror(rc) << "\n";
  } else {
    child_pid = pid;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    child_pid = -1;
    code = WIFEXITED(status)     ? WEXITSTATUS(status)
           : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                 : kExitError;
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);
  return code;
}

// This program's path, resolved ("" if unknown).
std::string SelfPath() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

// Points ctx at the daemon the program uses: the address given, the
// default socket's daemon, or the user's own (started if none answers; *use
// holds it while the program runs). Whether the program runs with the
// preload: not when the user's daemon cannot start and nothing else
// (--pin, --db) answers it; one line then says why.
bool ChooseDaemon(CliContext& ctx, const RunFlags& f,
                  const std::vector<std::string>& command,
                  const std::string& pin_mode, UserDaemonUse* use) {
  const std::string& address = ctx.options().address;
  if (pin_mode == "follow" || f.address_given || f.no_autostart) return true;
  if (address.rfind("unix:", 0) == 0 && SocketAnswers(address.substr(5))) {
    return true;
  }
  const UserDaemonPaths paths = UserDaemonPathsFromEnv();
  AutostartOptions options;
  options.daemon_binary = f.daemon_binary.empty()
                              ? absl::StrCat(ExecutableDir(), "/tunedbd")
                              : f.daemon_binary;
  options.keeper_binary = SelfPath();
  options.idle_exit_s = f.idle_exit_s;
  if (!SocketAnswers(paths.socket)) {
    const std::string cudnn = LocateCudnnDir(command);
    if (!cudnn.empty()) options.cudnn_dirs.push_back(cudnn);
  }
  absl::StatusOr<UserDaemonUse> started = EnsureUserDaemon(paths, options);
  if (!started.ok()) {
    ctx.err() << "tunedb run: no tunedb daemon (" << started.status().message()
              << "); the program runs without tunedb\n";
    return !f.pin.empty() || !f.db.empty();
  }
  if (started->started()) {
    ctx.err() << "tunedb run: started tunedbd for this user on " << paths.socket
              << " (cuDNN "
              << (options.cudnn_dirs.empty() ? "its workers load"
                                             : options.cudnn_dirs.front())
              << "; it stops after " << f.idle_exit_s
              << "s unused; tunedb run --daemon-status)\n";
  }
  ctx.options().address = paths.address();
  *use = std::move(*started);
  return true;
}

// --job, and torchrun's TORCHELASTIC_RUN_ID when it stands in for it: an
// invalid --job is refused (false, after saying why); an invalid run id is
// warned of once (the preload ignores it).
bool CheckJob(CliContext& ctx, const RunFlags& f) {
  if (!f.job.empty()) {
    const absl::Status valid = ValidateJobId(f.job);
    if (!valid.ok()) {
      ctx.err() << "tunedb run: error: --job: " << valid.message() << "\n";
    }
    return valid.ok();
  }
  const char* run_id = std::getenv("TORCHELASTIC_RUN_ID");
  if (run_id == nullptr || *run_id == '\0') return true;
  const absl::Status valid = ValidateJobId(run_id);
  if (!valid.ok()) {
    ctx.err() << "tunedb run: warning: TORCHELASTIC_RUN_ID is not a job id ("
              << valid.message()
              << "): the program's ranks are not answered as one job (set "
                 "--job)\n";
  }
  return true;
}

// --daemon-status: the user's daemon's socket, database, log and pids.
int PrintDaemonStatus(CliContext& ctx) {
  const UserDaemonPaths paths = UserDaemonPathsFromEnv();
  const UserDaemonState s = ReadUserDaemonState(paths);
  ctx.out() << "tunedbd for this user: "
            << (s.answers ? "running" : "not running") << "\n"
            << "  socket    " << paths.socket << "\n"
            << "  database  " << paths.db << "\n"
            << "  log       " << paths.log << "\n";
  if (s.keeper_pid > 0) {
    ctx.out() << "  pid       " << s.daemon_pid << " (keeper " << s.keeper_pid
              << ")\n";
  }
  return s.answers ? kExitOk : kExitUnreachable;
}

// --daemon-stop: stops the user's daemon (none running is not an error).
int StopDaemon(CliContext& ctx) {
  const UserDaemonPaths paths = UserDaemonPathsFromEnv();
  const UserDaemonState s = ReadUserDaemonState(paths);
  const absl::Status stopped = StopUserDaemon(paths, absl::Seconds(60));
  if (absl::IsNotFound(stopped)) {
    ctx.err() << "tunedb run: " << stopped.message() << "\n";
    return kExitOk;
  }
  if (!stopped.ok()) {
    ctx.err() << "tunedb run: error: " << stopped.message() << "\n";
    return kExitError;
  }
  ctx.err() << "tunedb run: stopped tunedbd (pid " << s.daemon_pid << ")\n";
  return kExitOk;
}

int RunCommand(CliContext& ctx, const RunFlags& f) {
  std::vector<std::string> command = f.command;
  if (!command.empty() && command.front() == "--")
    command.erase(command.begin());
  if (f.daemon_keeper && !command.empty()) {
    return RunDaemonKeeper(UserDaemonPathsFromEnv(), f.idle_exit_s, command);
  }
  if (f.daemon_status) return PrintDaemonStatus(ctx);
  if (f.daemon_stop) return StopDaemon(ctx);
  if (command.empty()) {
    ctx.err() << "tunedb run: no command given (tunedb run -- CMD ...)\n";
    return kExitUsage;
  }
  if (!CheckJob(ctx, f)) return kExitUsage;
  std::string preload = ResolvePreload(ctx, f);
  if (preload.empty()) return kExitUsage;
  std::string pin_mode;
  if (!f.pin.empty()) {
    int code = kExitOk;
    pin_mode = PinMode(ctx, f, &code);
    if (pin_mode.empty()) return code;
  }
  UserDaemonUse use;
  if (!ChooseDaemon(ctx, f, command, pin_mode, &use)) {
    return SpawnAndWait(ctx, std::move(command), PlainEnvironment());
  }
  std::string misses_file;
  if (f.tune_after) {
    misses_file = MakeMissesFile();
    if (misses_file.empty()) {
      ctx.err() << "tunedb run: cannot make a file for the misses: "
                << strerror(errno) << "\n";
      return kExitError;
    }
  }
  const int code =
      SpawnAndWait(ctx, std::move(command),
                   ProgramEnvironment(ctx, f, preload, misses_file, pin_mode));
  if (!misses_file.empty()) TuneMisses(ctx, misses_file);
  if (pin_mode == "record") return CheckRecorded(ctx, f, code);
  return code;
}

}  // namespace

std::vector<std::string> WithRunSeparator(std::vector<std::string> args) {
  auto takes_value = [](const std::string& a, bool in_run) {
    if (a.find('=') != std::string::npos) return false;
    if (a == "--address" || a == "--timeout") return true;
    return in_run && (a == "--preload" || a == "--log" || a == "--db" ||
                      a == "--exit-wait" || a == "--pin" ||
                      a == "--pin-mismatch" || a == "--job" ||
                      a == "--daemon-binary" || a == "--daemon-idle-exit");
  };
  bool in_run = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") return args;
    if (!a.empty() && a[0] == '-') {
      if (takes_value(a, in_run)) ++i;
      continue;
    }
    if (!in_run) {
      if (a != "run") return args;  // another subcommand
      in_run = true;
      continue;
    }
    args.insert(args.begin() + static_cast<std::ptrdiff_t>(i), "--");
    return args;
  }
  return args;
}

namespace {

// The flags of the user's own daemon (daemon_autostart.h).
void AddDaemonFlags(CLI::App* run, RunFlags& flags) {
  run->add_flag("--no-daemon-autostart", flags.no_autostart,
                "Do not start a daemon for this user when none answers (the "
                "default: one starts on $XDG_RUNTIME_DIR/tunedb/tunedbd.sock, "
                "else /tmp/tunedb-$UID/, with its database in "
                "$XDG_CACHE_HOME/tunedb/, else ~/.cache/tunedb/; never when "
                "--address or TUNEDB_ADDRESS is given)");
  run->add_option("--daemon-binary", flags.daemon_binary,
                  "The tunedbd to start (default: beside the tunedb binary)")
      ->envname("TUNEDB_DAEMON_BINARY");
  run->add_option("--daemon-idle-exit", flags.idle_exit_s,
                  "A daemon started for this user stops after this many "
                  "seconds with no program running under tunedb run, no "
                  "request and no search queued")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  run->add_flag("--daemon-status", flags.daemon_status,
                "Show the daemon started for this user (socket, database, "
                "log, pid); exit 3 if none is running");
  run->add_flag("--daemon-stop", flags.daemon_stop,
                "Stop the daemon started for this user");
  run->add_flag("--daemon-keeper", flags.daemon_keeper)->group("");
}

}  // namespace

void AddRunCommand(CLI::App& app, CliContext& ctx, int* exit_code) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* run = app.add_subcommand(
      "run",
      "Run a program with tunedb answering its cuDNN algorithm searches "
      "and engine-heuristics queries (LD_PRELOAD of libtunedb_preload.so; "
      "see docs/preload.md). Exits with the program's exit code.");
  run->footer(
      "Usage: tunedb run [OPTIONS] [--] CMD [ARGS...]\n"
      "       tunedb run --daemon-status | --daemon-stop\n"
      "Without --address or TUNEDB_ADDRESS, and with no daemon on the "
      "default socket, the program uses a daemon of this user's, started "
      "if none answers (docs/preload.md).");
  run->add_option("--preload", flags->preload,
                  "The preload library (default: libtunedb_preload.so beside "
                  "the tunedb binary or in its ../lib)")
      ->envname("TUNEDB_PRELOAD_PATH");
  run->add_option("--log", flags->log,
                  "The preload's log: off, summary (one line of counters at "
                  "exit; the default) or calls (also one line per call)")
      ->check(CLI::IsMember({"off", "summary", "calls"}));
  run->add_option("--db", flags->db,
                  "The daemon's database file, read while the daemon is down");
  run->add_option("--exit-wait", flags->exit_wait_s,
                  "At exit, wait up to this many seconds for the background "
                  "tunes of the program's misses (default 0)")
      ->check(CLI::NonNegativeNumber);
  run->add_flag("--tune-after", flags->tune_after,
                "Tune the program's misses once it has exited, not while it "
                "runs (no search shares the GPU with it); waits for those "
                "searches");
  run->add_flag("--report", flags->report,
                "At exit, add the program's counters to the daemon's "
                "(tunedb stats, \"drop-in\")");
  run->add_option("--pin", flags->pin,
                  "A pin file (docs/pins.md): without one at FILE, record "
                  "every answer the program gets into it; with one, answer "
                  "from it alone, so every run, process and rank gets the "
                  "same algorithms (no daemon needed)");
  run->add_flag("--repin", flags->repin,
                "With --pin: record the pin again (the old one is kept as "
                "FILE.old)");
  run->add_option("--pin-mismatch", flags->pin_mismatch,
                  "With --pin: refuse (the default: the program stops with "
                  "exit 78) or warn (follow it anyway, naming the "
                  "differences) a pin made for another GPU model, cuDNN, "
                  "CUDA runtime or driver")
      ->check(CLI::IsMember({"refuse", "warn"}));
  run->add_flag("--deterministic", flags->deterministic,
                "With --pin: the program asks for deterministic algorithms "
                "only (torch.backends.cudnn.deterministic = True); a "
                "recorded pin says so");
  run->add_option("--job", flags->job,
                  "The job the program is a rank of (default: torchrun's "
                  "TORCHELASTIC_RUN_ID): the daemon gives every process of "
                  "the job the job's first answer per problem, even while a "
                  "search finishes, and a miss gets cuDNN's first heuristic "
                  "choice (docs/pins.md)");
  AddDaemonFlags(run, *flags);
  run->add_option("command", flags->command, "The program and its arguments");
  run->callback([&app, &ctx, flags, exit_code] {
    const char* address = std::getenv("TUNEDB_ADDRESS");
    flags->address_given = app.get_option("--address")->count() > 0 ||
                           (address != nullptr && *address != '\0');
    *exit_code = RunCommand(ctx, *flags);
  });
}

}  // namespace tunedb::tuner
