// `tunedb run` with nothing set up: the real `tunedb` and `tunedbd` binaries,
// with XDG_RUNTIME_DIR and XDG_CACHE_HOME in a fresh folder per test. The
// daemon started here has no GPU (or this machine's), so it serves what is
// stored and searches what it can; the programs are shell commands.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_dir.h"
#include "tuner/daemon_autostart.h"

namespace tunedb::tuner {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing_util::TempDir;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

struct Result {
  int code = -1;
  std::string out, err;
};

// A process started with `argv` and exactly `env`, its output in files.
class Process {
 public:
  Process(const TempDir& dir, std::vector<std::string> argv,
          std::vector<std::string> env) {
    static int count = 0;
    const std::string name = dir.File("p" + std::to_string(++count));
    out_ = name + ".out";
    err_ = name + ".err";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out_.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&actions, 2, err_.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    std::vector<char*> a, e;
    for (std::string& s : argv) a.push_back(s.data());
    a.push_back(nullptr);
    for (std::string& s : env) e.push_back(s.data());
    e.push_back(nullptr);
    EXPECT_EQ(posix_spawn(&pid_, a[0], &actions, nullptr, a.data(), e.data()),
              0);
    posix_spawn_file_actions_destroy(&actions);
  }

  Result Wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    Result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = ReadAll(out_);
    r.err = ReadAll(err_);
    return r;
  }

 private:
  pid_t pid_ = -1;
  std::string out_, err_;
};

// The tunedbd processes listening on `socket` (not their keepers).
int DaemonsOn(const std::string& socket) {
  int n = 0;
  DIR* proc = opendir("/proc");  // lists processes, not their threads
  while (dirent* e = proc != nullptr ? readdir(proc) : nullptr) {
    std::ifstream in(std::string("/proc/") + e->d_name + "/cmdline");
    if (!in) continue;
    const std::string cmdline((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
    const std::string program = cmdline.substr(0, cmdline.find('\0'));
    if (absl::EndsWith(program, "/tunedbd") &&
        absl::StrContains(cmdline, socket)) {
      ++n;
    }
  }
  if (proc != nullptr) closedir(proc);
  return n;
}

class RunAutostartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (SocketAnswers("/run/tunedb/tunedb.sock")) {
      GTEST_SKIP() << "a daemon answers on the default socket, so tunedb run "
                      "uses it and starts none";
    }
    paths_ = UserDaemonPathsFor(
        [this](const char* name) -> const char* {
          if (std::string(name) == "XDG_RUNTIME_DIR") return run_dir_.c_str();
          if (std::string(name) == "XDG_CACHE_HOME") return cache_.c_str();
          return nullptr;
        },
        getuid(), "/");
    ASSERT_EQ(mkdir(run_dir_.c_str(), 0700), 0);  // as a session makes it
  }

  void TearDown() override {
    if (!paths_.socket.empty()) Tunedb({"run", "--daemon-stop"});
  }

  std::vector<std::string> Env(std::vector<std::string> extra = {}) const {
    std::vector<std::string> env = {
        "PATH=/usr/bin:/bin",
        "HOME=" + dir_.path(),
        "XDG_RUNTIME_DIR=" + run_dir_,
        "XDG_CACHE_HOME=" + cache_,
        std::string("TUNEDB_CLI=") + TUNEDB_CLI_PATH,
        "TUNEDB_PRELOAD_LOG=off"};
    for (const std::string& e : extra) {  // replaces one of the same name
      const std::string name = e.substr(0, e.find('=') + 1);
      env.erase(std::remove_if(env.begin(), env.end(),
                               [&](const std::string& v) {
                                 return v.compare(0, name.size(), name) == 0;
                               }),
                env.end());
      env.push_back(e);
    }
    return env;
  }

  Process Start(std::vector<std::string> args,
                std::vector<std::string> extra_env = {}) {
    args.insert(args.begin(), TUNEDB_CLI_PATH);
    return Process(dir_, args, Env(extra_env));
  }

  Result Tunedb(std::vector<std::string> args,
                std::vector<std::string> extra_env = {}) {
    return Start(std::move(args), std::move(extra_env)).Wait();
  }

  TempDir dir_;
  const std::string run_dir_ = dir_.File("run");
  const std::string cache_ = dir_.File("cache");
  UserDaemonPaths paths_;
};

TEST_F(RunAutostartTest, TwoRunsStartedAtOnceShareOneDaemonTheyStarted) {
  const std::vector<std::string> run = {
      "run", "--", "sh", "-c", "echo \"ran on $TUNEDB_ADDRESS\"; sleep 1"};
  Process a = Start(run);
  Process b = Start(run);
  const Result ra = a.Wait();
  const Result rb = b.Wait();
  EXPECT_EQ(ra.code, 0) << ra.err;
  EXPECT_EQ(rb.code, 0) << rb.err;
  const std::string ran = "ran on " + paths_.address() + "\n";
  EXPECT_EQ(ra.out, ran);
  EXPECT_EQ(rb.out, ran);
  EXPECT_NE(absl::StrContains(ra.err, "started tunedbd for this user"),
            absl::StrContains(rb.err, "started tunedbd for this user"))
      << ra.err << "---\n"
      << rb.err;
  EXPECT_EQ(DaemonsOn(paths_.socket), 1);
  EXPECT_TRUE(SocketAnswers(paths_.socket));
}

TEST_F(RunAutostartTest, TheProgramTalksToTheUsersDaemonAndItsDatabase) {
  const Result r =
      Tunedb({"run", "--", "sh", "-c", "exec \"$TUNEDB_CLI\" stats"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(cache_ + "/tunedb/tunedb.db"));
  EXPECT_THAT(r.err,
              HasSubstr("started tunedbd for this user on " + paths_.socket));
}

TEST_F(RunAutostartTest, StatusShowsTheDaemonAndStopStopsIt) {
  ASSERT_EQ(Tunedb({"run", "--", "true"}).code, 0);
  Result status = Tunedb({"run", "--daemon-status"});
  EXPECT_EQ(status.code, 0) << status.err;
  EXPECT_THAT(status.out, HasSubstr("running"));
  EXPECT_THAT(status.out, HasSubstr("socket    " + paths_.socket));
  EXPECT_THAT(status.out, HasSubstr("database  " + paths_.db));
  EXPECT_THAT(status.out, HasSubstr("pid       "));
  const Result stop = Tunedb({"run", "--daemon-stop"});
  EXPECT_EQ(stop.code, 0) << stop.err;
  EXPECT_THAT(stop.err, HasSubstr("stopped tunedbd (pid "));
  EXPECT_EQ(DaemonsOn(paths_.socket), 0);
  status = Tunedb({"run", "--daemon-status"});
  EXPECT_EQ(status.code, 3);
  EXPECT_THAT(status.out, HasSubstr("not running"));
  EXPECT_EQ(Tunedb({"run", "--daemon-stop"}).code, 0);  // nothing to stop
}

TEST_F(RunAutostartTest, IdleDaemonStopsAfterItsIdleTimeNotBeforeAndRestarts) {
  // The program outlives the idle time: while it runs, the daemon stays.
  const Result r = Tunedb({"run", "--daemon-idle-exit", "1", "--", "sh", "-c",
                           "sleep 3; exec \"$TUNEDB_CLI\" stats >/dev/null"});
  EXPECT_EQ(r.code, 0) << r.err;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (DaemonsOn(paths_.socket) > 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(DaemonsOn(paths_.socket), 0);
  EXPECT_THAT(ReadAll(paths_.log), HasSubstr("idle for 1s; stopping tunedbd"));
  // The next run starts it again, on the same database.
  const Result again = Tunedb({"run", "--", "true"});
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_THAT(again.err, HasSubstr("started tunedbd for this user"));
  EXPECT_EQ(DaemonsOn(paths_.socket), 1);
}

TEST_F(RunAutostartTest, AnExplicitAddressIsNeverReplacedByADaemonOfOurOwn) {
  const std::string none = "unix:" + dir_.File("none.sock");
  Result r = Tunedb(
      {"--address", none, "run", "--", "sh", "-c", "echo $TUNEDB_ADDRESS"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, none + "\n");
  r = Tunedb({"run", "--", "sh", "-c", "echo $TUNEDB_ADDRESS"},
             {"TUNEDB_ADDRESS=" + none});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, none + "\n");
  EXPECT_EQ(DaemonsOn(paths_.socket), 0);
  EXPECT_NE(access(paths_.socket.c_str(), F_OK), 0);
}

// The program's exit code, its LD_PRELOAD and one line of stderr.
void ExpectRunWithoutTunedb(const Result& r) {
  EXPECT_EQ(r.code, 7);
  EXPECT_EQ(r.out, "preload=[]\n");
  const std::vector<std::string> lines =
      absl::StrSplit(r.err, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_THAT(lines[0], HasSubstr("tunedb run: no tunedb daemon ("));
  EXPECT_THAT(lines[0], HasSubstr("the program runs without tunedb"));
}

const std::vector<std::string> kPrintPreload = {
    "run", "--", "sh", "-c", "echo \"preload=[$LD_PRELOAD]\"; exit 7"};

TEST_F(RunAutostartTest, WithoutTunedbdTheProgramRunsAloneAndOneLineSaysWhy) {
  std::vector<std::string> args = kPrintPreload;
  args.insert(args.begin() + 1, {"--daemon-binary", dir_.File("no-tunedbd")});
  const Result r = Tunedb(args);
  ExpectRunWithoutTunedb(r);
  EXPECT_THAT(r.err, HasSubstr("cannot run " + dir_.File("no-tunedbd")));
}

TEST_F(RunAutostartTest, AnUnusableCacheFolderLeavesTheProgramRunningAlone) {
  std::ofstream(dir_.File("not-a-folder")) << "";
  const Result r =
      Tunedb(kPrintPreload, {"XDG_CACHE_HOME=" + dir_.File("not-a-folder")});
  ExpectRunWithoutTunedb(r);
  EXPECT_THAT(r.err, HasSubstr("cannot make " + dir_.File("not-a-folder")));
}

TEST_F(RunAutostartTest, ADaemonThatExitsAtStartLeavesTheProgramRunningAlone) {
  const std::string fake = dir_.File("tunedbd");
  std::ofstream(fake) << "#!/bin/sh\necho 'cannot open the database' >&2\n"
                         "exit 1\n";
  chmod(fake.c_str(), 0755);
  std::vector<std::string> args = kPrintPreload;
  args.insert(args.begin() + 1, {"--daemon-binary", fake});
  const Result r = Tunedb(args);
  ExpectRunWithoutTunedb(r);
  EXPECT_THAT(r.err, HasSubstr("tunedbd exited at start"));
}

TEST_F(RunAutostartTest, AnInvalidJobIsRefusedBeforeTheProgramStarts) {
  const Result r = Tunedb({"run", "--no-daemon-autostart", "--job", "a job!",
                           "--", "touch", dir_.File("ran")});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("tunedb run: error: --job: "));
  EXPECT_NE(access(dir_.File("ran").c_str(), F_OK), 0);
}

TEST_F(RunAutostartTest, AnInvalidTorchelasticRunIdIsWarnedOfOnceAtStart) {
  const Result r =
      Tunedb({"run", "--no-daemon-autostart", "--", "sh", "-c", "echo ran"},
             {"TORCHELASTIC_RUN_ID=a run id!", "TUNEDB_ADDRESS=unix:/no.sock"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "ran\n");
  const std::string warning = "warning: TORCHELASTIC_RUN_ID is not a job id";
  ASSERT_THAT(r.err, HasSubstr(warning));
  EXPECT_EQ(r.err.find(warning), r.err.rfind(warning));
  // A valid one, or one --job overrides, is not warned of.
  EXPECT_THAT(Tunedb({"run", "--no-daemon-autostart", "--", "true"},
                     {"TORCHELASTIC_RUN_ID=job-1"})
                  .err,
              Not(HasSubstr(warning)));
  EXPECT_THAT(
      Tunedb({"run", "--no-daemon-autostart", "--job", "j", "--", "true"},
             {"TORCHELASTIC_RUN_ID=a run id!"})
          .err,
      Not(HasSubstr(warning)));
}

}  // namespace
}  // namespace tunedb::tuner
