// libtunedb_preload.so in a real program: preload_probe, linked against the
// fake libcudnn.so.9, makes legacy Find/FindEx/Get_v7 calls with the preload
// in LD_PRELOAD, against a real daemon (in-process, simulated finder, over
// its Unix socket). The expected tuned choices are the client's answers for
// the same key and constraints; the pass-through results are the fake's
// fixed lists (fake_cudnn_lists.h).
#include <cudnn.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fake_cudnn_lists.h"
#include "common/pin_file.h"
#include "nlohmann/json.hpp"
#include "preload_harness.h"
#include "server/service/server.h"
#include "temp_dir.h"
#include "test_values.h"
#include "tunedb/client.h"
#include "tunedb/cudnn_types.h"

namespace tunedb {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing_util::TempDir;

using preload_testing::kShape;
using preload_testing::ReadFile;
using preload_testing::Spawn;
using ProbeRun = preload_testing::SpawnResult;

int RunsSoFar() { return preload_testing::SpawnCount(); }

class PreloadTest : public preload_testing::PreloadDaemonTest {
 protected:
  std::vector<std::string> PreloadEnv() const {
    return {std::string("LD_PRELOAD=") + PRELOAD_PATH,
            "TUNEDB_ADDRESS=" + server_->address(),
            "TUNEDB_DEVICE_KEY=" + device_.ToText(), "TUNEDB_PRELOAD_LOG=calls",
            // A loaded test machine must not turn a first connection into
            // "daemon down"; a missing socket still fails at once.
            "TUNEDB_PRELOAD_LOOKUP_MS=10000"};
  }

  // preload_probe with `args` after kShape, with the preload (and `env`).
  ProbeRun Probe(std::vector<std::string> args,
                 std::vector<std::string> env = {}, bool preload = true) {
    std::vector<std::string> argv = {PROBE_PATH};
    argv.insert(argv.end(), kShape.begin(), kShape.end());
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> all =
        preload ? PreloadEnv() : std::vector<std::string>{};
    all.insert(all.end(), env.begin(), env.end());
    ProbeRun run = Spawn(dir_, argv, all);
    EXPECT_TRUE(run.out.is_object()) << "probe printed no JSON; stderr:\n"
                                     << run.err;
    return run;
  }

  ProblemKey Key(ConvOp op) const { return ProbeKey(op); }

  // `tunedb run RUN_FLAGS... preload_probe kShape... --call find_ex
  // --exit-code CODE`, against this test's daemon.
  std::vector<std::string> TunedbRunArgv(std::vector<std::string> run_flags,
                                         const char* code) const {
    std::vector<std::string> argv = {TUNEDB_CLI_PATH, "--address",
                                     server_->address(), "run"};
    argv.insert(argv.end(), run_flags.begin(), run_flags.end());
    argv.push_back(PROBE_PATH);
    argv.insert(argv.end(), kShape.begin(), kShape.end());
    for (const char* a : {"--call", "find_ex", "--exit-code", code}) {
      argv.push_back(a);
    }
    return argv;
  }

  // Stores the daemon's search for `key` (waits for it).
  void Tune(const ProblemKey& key) {
    ASSERT_TRUE(DaemonClient(/*tune=*/true)->Get(key).tuned());
  }

  // What the client answers for `key` under `c` (the stored record's
  // choice), as the daemon has it.
  Answer Tuned(const ProblemKey& key, const Constraints& c = {}) {
    return DaemonClient(/*tune=*/false)->Get(key, c);
  }
};

// The fake's list as the probe prints it.
nlohmann::json FakeList(const fake_cudnn::Entry* list, int count) {
  nlohmann::json out = nlohmann::json::array();
  for (int i = 0; i < count && i < fake_cudnn::kListSize; ++i) {
    out.push_back({{"algo", list[i].algo},
                   {"status", static_cast<int>(list[i].status)},
                   {"memory", list[i].memory},
                   {"deterministic", list[i].deterministic},
                   {"math", static_cast<int>(list[i].math)},
                   {"time", list[i].time}});
  }
  return out;
}

TEST_F(PreloadTest, WithoutThePreloadTheProbeSeesTheFakeLists) {
  ProbeRun run = Probe({"--call", "find_ex"}, {}, /*preload=*/false);
  EXPECT_EQ(run.out["perf"], FakeList(fake_cudnn::kFindList, 8));
  EXPECT_EQ(run.out["real_calls"]["fwd_find_ex"], 1);
  EXPECT_THAT(run.err, Not(HasSubstr("tunedb preload")));
}

TEST_F(PreloadTest, AMissPassesThroughUnchangedAndTheDaemonLearnsTheProblem) {
  const ProblemKey key = Key(ConvOp::kForward);
  ProbeRun run =
      Probe({"--call", "find_ex"}, {"TUNEDB_PRELOAD_EXIT_WAIT_S=30"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out["status"], 0);
  EXPECT_EQ(run.out["perf"], FakeList(fake_cudnn::kFindList, 8));
  EXPECT_EQ(run.out["real_calls"]["fwd_find_ex"], 1);
  // The preload took the call (interposed) and counted a miss.
  EXPECT_THAT(run.err, HasSubstr("tunedb preload: fwd miss"));
  EXPECT_THAT(run.err, HasSubstr("1 calls: 0 hits, 1 misses"));
  // ... and asked the daemon to tune it: the record is stored now, and the
  // next process hits.
  EXPECT_TRUE(Tuned(key).tuned());
  ProbeRun next = Probe({"--call", "find_ex"});
  EXPECT_EQ(next.out["real_calls"]["fwd_find_ex"], 0);
  EXPECT_EQ(next.out["perf"][0]["algo"], Tuned(key).algo);
}

TEST_F(PreloadTest, WithAMissesFileAMissIsWrittenThereInsteadOfTuned) {
  const ProblemKey key = Key(ConvOp::kForward);
  const std::string misses = dir_.File("misses");
  // With an exit wait that would let a background tune finish.
  ProbeRun run = Probe(
      {"--call", "find_ex"},
      {"TUNEDB_PRELOAD_MISSES_FILE=" + misses, "TUNEDB_PRELOAD_EXIT_WAIT_S=5"});
  EXPECT_EQ(run.out["status"], 0) << run.err;
  EXPECT_EQ(run.out["perf"], FakeList(fake_cudnn::kFindList, 8));
  EXPECT_THAT(run.err, HasSubstr("0 hits, 1 misses"));
  // The key, as text; the daemon was asked to look it up, not to tune it.
  EXPECT_EQ(preload_testing::ReadFile(misses), key.ToText() + "\n");
  EXPECT_FALSE(Stored(key).has_value());
  const CoreStats stats = server_->core().Stats();
  EXPECT_EQ(stats.searches, 0);
  EXPECT_EQ(stats.misses, stats.lookup_misses);
  EXPECT_GE(stats.lookup_misses, 1);
}

TEST_F(PreloadTest, TunedbRunTuneAfterTunesTheMissesOnceTheCommandHasExited) {
  const ProblemKey key = Key(ConvOp::kForward);
  const std::vector<std::string> argv =
      TunedbRunArgv({"--tune-after", "--"}, "3");
  ProbeRun run =
      Spawn(dir_, argv,
            {"TUNEDB_DEVICE_KEY=" + device_.ToText(),
             "TUNEDB_PRELOAD_LOOKUP_MS=10000", "TMPDIR=" + dir_.path()});
  EXPECT_EQ(run.exit_code, 3) << run.err;  // the program's, not the tuning's
  EXPECT_EQ(run.out["real_calls"]["fwd_find_ex"], 1);
  EXPECT_THAT(run.err, HasSubstr("1 calls: 0 hits, 1 misses"));
  EXPECT_THAT(
      run.err,
      HasSubstr("tunedb run: tuning the 1 problems the program missed"));
  EXPECT_THAT(run.err, HasSubstr("tunedb run: 1 searched, 0 already stored, "
                                 "0 failed"));
  ASSERT_TRUE(Stored(key).has_value());
  // The misses file is gone.
  for (const auto& e : std::filesystem::directory_iterator(dir_.path())) {
    EXPECT_THAT(e.path().filename().string(),
                Not(HasSubstr("tunedb-run-misses")));
  }
  // The next process hits.
  ProbeRun next = Probe({"--call", "find_ex"});
  EXPECT_EQ(next.out["real_calls"]["fwd_find_ex"], 0);
}

TEST_F(PreloadTest, AHitComesBackInTunedOrderWithoutCallingFind) {
  const ProblemKey key = Key(ConvOp::kForward);
  Tune(key);
  const Answer fastest = Tuned(key);
  Constraints det;
  det.deterministic_only = true;
  const Answer deterministic = Tuned(key, det);
  ASSERT_TRUE(fastest.tuned());
  ASSERT_TRUE(deterministic.tuned());
  // The simulated ranking differs from the fake's lists, so the order below
  // can only come from tunedb.
  ASSERT_NE(fastest.algo, fake_cudnn::kFindList[0].algo);
  ASSERT_NE(fastest.algo, fake_cudnn::kHeuristicList[0].algo);
  ASSERT_NE(fastest.algo, deterministic.algo);

  for (const std::string call : {"find_ex", "find", "get_v7"}) {
    SCOPED_TRACE(call);
    ProbeRun run = Probe({"--call", call});
    ASSERT_EQ(run.out["status"], 0);
    const nlohmann::json& perf = run.out["perf"];
    ASSERT_GE(perf.size(), 2u);
    EXPECT_EQ(perf[0]["algo"], fastest.algo);
    EXPECT_EQ(perf[0]["math"], static_cast<int>(ToCudnn(fastest.math_type)));
    EXPECT_EQ(perf[0]["status"], 0);
    EXPECT_EQ(perf[0]["deterministic"], false);
    EXPECT_GE(perf[0]["memory"].get<int64_t>(), fastest.workspace_bytes);
    EXPECT_EQ(perf[1]["algo"], deterministic.algo);
    EXPECT_EQ(perf[1]["deterministic"], true);
    // The rest is cuDNN's heuristic list without those two, in its order.
    std::vector<int> tail, expected_tail;
    for (size_t i = 2; i < perf.size(); ++i) tail.push_back(perf[i]["algo"]);
    for (const auto& e : fake_cudnn::kHeuristicList) {
      if (e.algo != fastest.algo && e.algo != deterministic.algo) {
        expected_tail.push_back(e.algo);
      }
    }
    expected_tail.resize(std::min<size_t>(expected_tail.size(), 8 - 2));
    EXPECT_EQ(tail, expected_tail);
    EXPECT_EQ(run.out["returned"], perf.size());
    // No benchmark: Find never reached cuDNN; the heuristic list did.
    EXPECT_EQ(run.out["real_calls"]["fwd_find"], 0);
    EXPECT_EQ(run.out["real_calls"]["fwd_find_ex"], 0);
    EXPECT_EQ(run.out["real_calls"]["fwd_get_v7"], 1);
    EXPECT_THAT(run.err, HasSubstr("1 calls: 1 hits, 0 misses"));
  }
}

TEST_F(PreloadTest, BackwardPassesAreAnsweredForTheirOwnKeys) {
  for (ConvOp op : {ConvOp::kBackwardData, ConvOp::kBackwardFilter}) {
    const ProblemKey key = Key(op);
    Tune(key);
    const Answer fastest = Tuned(key);
    ASSERT_TRUE(fastest.tuned());
    const std::string name(ConvOpName(op));
    SCOPED_TRACE(name);
    ProbeRun run = Probe({"--op", name, "--call", "find_ex"});
    ASSERT_EQ(run.out["status"], 0);
    EXPECT_EQ(run.out["perf"][0]["algo"], fastest.algo);
    EXPECT_EQ(run.out["real_calls"][name + "_find_ex"], 0);
    EXPECT_THAT(run.err, HasSubstr(name + " hit"));
  }
}

TEST_F(PreloadTest, AFindExCallersWorkspaceLimitIsHonoured) {
  const ProblemKey key = Key(ConvOp::kForward);
  Tune(key);
  const Answer fastest = Tuned(key);
  ASSERT_GT(fastest.workspace_bytes, 0);
  const int64_t limit = fastest.workspace_bytes - 1;
  Constraints c;
  c.max_workspace_bytes = limit;
  const Answer within = Tuned(key, c);
  ASSERT_TRUE(within.tuned());
  ASSERT_NE(within.algo, fastest.algo);

  ProbeRun run = Probe({"--call", "find_ex", "--ws", std::to_string(limit)});
  ASSERT_EQ(run.out["status"], 0);
  const nlohmann::json& perf = run.out["perf"];
  ASSERT_FALSE(perf.empty());
  EXPECT_EQ(perf[0]["algo"], within.algo);
  for (const auto& p : perf) {
    if (p["status"] == 0) {
      EXPECT_LE(p["memory"].get<int64_t>(), limit) << p;
    }
  }
}

TEST_F(PreloadTest, AHitOffersTheWorkspaceThisCudnnSaysTheChoiceNeeds) {
  const ProblemKey key = Key(ConvOp::kForward);
  Tune(key);
  const Answer fastest = Tuned(key);
  // cuDNN here says every algorithm needs more than the stored record.
  const int64_t needs = fastest.workspace_bytes + 12345;
  ProbeRun run = Probe({"--call", "find_ex"},
                       {"FAKE_CUDNN_WORKSPACE=" + std::to_string(needs)});
  ASSERT_EQ(run.out["status"], 0);
  EXPECT_EQ(run.out["perf"][0]["algo"], fastest.algo);
  EXPECT_EQ(run.out["perf"][0]["memory"], needs);
}

TEST_F(PreloadTest, ARequestedCountBelowTheListTruncatesIt) {
  const ProblemKey key = Key(ConvOp::kForward);
  Tune(key);
  ProbeRun run = Probe({"--call", "get_v7", "--count", "1"});
  ASSERT_EQ(run.out["status"], 0);
  EXPECT_EQ(run.out["returned"], 1);
  EXPECT_EQ(run.out["perf"][0]["algo"], Tuned(key).algo);
}

// A call the preload cannot answer goes to cuDNN unchanged, with the reason
// counted on the exit line.
struct PassThroughCase {
  const char* what;
  std::vector<std::string> args;
  std::vector<std::string> env;  // "{dir}" is the test's folder
  const char* reason;
  const char* real_call;
};

TEST_F(PreloadTest, CallsItCannotAnswerPassThroughUnchanged) {
  const std::vector<PassThroughCase> cases = {
      {"unsupported descriptors (int8)",
       {"--call", "find_ex", "--type", "i8"},
       {},
       "unsupported_problem=1",
       "fwd_find_ex"},
      {"a failing heuristic on a hit",
       {"--call", "find"},
       {"FAKE_CUDNN_FAIL_GET_V7=1"},
       "heuristic_failed=1",
       "fwd_find"},
      {"another cuDNN major version",
       {"--call", "find_ex"},
       {"FAKE_CUDNN_VERSION=80907"},
       "cudnn_version=1",
       "fwd_find_ex"},
      {"a bad device key",
       {"--call", "find_ex"},
       {"TUNEDB_DEVICE_KEY=gpu=x"},
       "no_device=1",
       "fwd_find_ex"},
      {"the preload switched off",
       {"--call", "get_v7"},
       {"TUNEDB_PRELOAD=off"},
       "disabled=1",
       "fwd_get_v7"},
      {"a requested count of 0",
       {"--call", "find_ex", "--count", "0"},
       {},
       "bad_arguments=1",
       "fwd_find_ex"},
      {"a daemon that is down",
       {"--call", "find_ex"},
       {"TUNEDB_ADDRESS=unix:{dir}/nobody.sock"},
       "daemon_down=1",
       "fwd_find_ex"},
  };
  // Stored, so that each case's own cause is what passes the call through.
  Tune(Key(ConvOp::kForward));
  for (const PassThroughCase& c : cases) {
    SCOPED_TRACE(c.what);
    std::vector<std::string> env;
    for (std::string e : c.env) {
      const size_t at = e.find("{dir}");
      if (at != std::string::npos) e.replace(at, 5, dir_.path());
      env.push_back(e);
    }
    ProbeRun run = Probe(c.args, env);
    EXPECT_EQ(run.exit_code, 0);
    EXPECT_EQ(run.out["real_calls"][c.real_call], 1);
    const fake_cudnn::Entry* list =
        std::string(c.real_call).find("get_v7") != std::string::npos
            ? fake_cudnn::kHeuristicList
            : fake_cudnn::kFindList;
    if (run.out["status"] == 0) {
      EXPECT_EQ(run.out["perf"], FakeList(list, 8));
    }
    EXPECT_THAT(run.err, HasSubstr(c.reason));
  }
}

TEST_F(PreloadTest, WithoutItsCoreTheShimPassesEverythingThroughAndSaysWhy) {
  // The shim alone, in a folder without libtunedb_preload_core.so.
  const std::string lone = dir_.File("libtunedb_preload.so");
  {
    std::ifstream in(PRELOAD_PATH, std::ios::binary);
    std::ofstream out(lone, std::ios::binary);
    out << in.rdbuf();
  }
  ProbeRun run = Probe({"--call", "find_ex"}, {"LD_PRELOAD=" + lone});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out["perf"], FakeList(fake_cudnn::kFindList, 8));
  EXPECT_EQ(run.out["real_calls"]["fwd_find_ex"], 1);
  EXPECT_THAT(run.err, HasSubstr("cannot load libtunedb_preload_core.so"));
}

TEST_F(PreloadTest, TheExitLineCanBeSilenced) {
  ProbeRun run = Probe({"--call", "find_ex"}, {"TUNEDB_PRELOAD_LOG=off"});
  EXPECT_EQ(run.out["real_calls"]["fwd_find_ex"], 1);
  EXPECT_THAT(run.err, Not(HasSubstr("tunedb preload")));
}

// The program an exit line names ("" if none).
std::string ProgramOf(const std::string& err) {
  const std::string::size_type at = err.find("; program ");
  if (at == std::string::npos) return "";
  const std::string::size_type from = at + 10;
  return err.substr(from, err.find(',', from) - from);
}

TEST_F(PreloadTest, AProgramIsItsCommandLinesDigestTheSameForTheSameCommand) {
  const std::string first = ProgramOf(Probe({"--call", "find_ex"}).err);
  EXPECT_EQ(first.size(), 20u) << first;
  EXPECT_EQ(first.rfind("cmd-", 0), 0u) << first;
  EXPECT_EQ(ProgramOf(Probe({"--call", "find_ex"}).err), first);
  EXPECT_NE(ProgramOf(Probe({"--call", "get_v7"}).err), first);
}

TEST_F(PreloadTest, TunedbProgramNamesTheProgramAndAnInvalidOneIsIgnored) {
  EXPECT_EQ(ProgramOf(Probe({"--call", "find_ex"},
                            {"TUNEDB_PROGRAM=train-7"}).err),
            "train-7");
  ProbeRun bad = Probe({"--call", "find_ex"}, {"TUNEDB_PROGRAM=train 7!"});
  EXPECT_EQ(ProgramOf(bad.err).rfind("cmd-", 0), 0u) << bad.err;
  EXPECT_THAT(bad.err, HasSubstr("settings: program train 7! ignored"));
}

TEST_F(PreloadTest, ASecondRunOfACommandIsAnsweredByItsWarmWithoutALookup) {
  Tune(Key(ConvOp::kForward));
  ProbeRun first = Probe({"--call", "find_ex"});
  EXPECT_EQ(first.out["real_calls"]["fwd_find_ex"], 0);
  EXPECT_THAT(first.err, HasSubstr(", 0 answers from the warm call"));
  ProbeRun second = Probe({"--call", "find_ex"});
  EXPECT_EQ(second.out["real_calls"]["fwd_find_ex"], 0);
  EXPECT_EQ(second.out["perf"], first.out["perf"]);
  // The call's lookups (one per constraints it asks under) all came from
  // the Warm.
  EXPECT_THAT(second.err, Not(HasSubstr(", 0 answers from the warm call")));
  EXPECT_THAT(second.err, HasSubstr("1 calls: 1 hits"));
  ProbeRun off = Probe({"--call", "find_ex"}, {"TUNEDB_WARM=0"});
  EXPECT_EQ(off.out["perf"], first.out["perf"]);
  EXPECT_THAT(off.err, HasSubstr(", 0 answers from the warm call"));
}

// The real libcudnn.so.9, without a GPU: its descriptor calls are
// host-only, so the preload, bound under the real version node, reads real
// descriptors back into the key the daemon stores, before the call goes on
// to cuDNN. That call then gets a null handle (there is no GPU to make one),
// on which cuDNN itself crashes, with or without the preload.
TEST_F(PreloadTest, WithTheRealCudnnTheProblemIsReadBackIntoTheDaemonsKey) {
  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);  // the crash below writes no core file
  std::vector<std::string> argv = {REAL_PROBE_PATH};
  argv.insert(argv.end(), kShape.begin(), kShape.end());
  for (const char* a : {"--op", "bwd_filter", "--call", "get_v7", "--nhwc"}) {
    argv.push_back(a);
  }
  ProbeRun with = Spawn(dir_, argv, PreloadEnv());
  ProbeRun without = Spawn(dir_, argv, {});
  ProblemKey key = Key(ConvOp::kBackwardFilter);
  key.problem.layout = Layout::kNHWC;
  EXPECT_THAT(with.err, HasSubstr("bwd_filter miss " + key.ToText() + "\n"));
  EXPECT_EQ(with.exit_code, without.exit_code);
}

TEST_F(PreloadTest, TunedbRunTuneAfterTunesAKeyTwoProcessesMissedOnce) {
  // Two processes of one command miss the same problem.
  std::string probe = PROBE_PATH;
  for (const std::string& a : kShape) probe += " " + a;
  probe += " --call find_ex";
  ProbeRun run = Spawn(
      dir_,
      {TUNEDB_CLI_PATH, "--address", server_->address(), "run", "--tune-after",
       "--", "/bin/sh", "-c", probe + " > /dev/null; " + probe},
      {"TUNEDB_DEVICE_KEY=" + device_.ToText(),
       "TUNEDB_PRELOAD_LOOKUP_MS=10000", "TMPDIR=" + dir_.path()});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(
      run.err,
      HasSubstr("tunedb run: tuning the 1 problems the program missed"));
  EXPECT_TRUE(Stored(Key(ConvOp::kForward)).has_value());
}

TEST_F(PreloadTest, TunedbRunPreloadsTheCommandAndReturnsItsExitCode) {
  Tune(Key(ConvOp::kForward));
  // No "--": the probe's own flags (--n, --call, ...) still go to it.
  const std::vector<std::string> argv =
      TunedbRunArgv({"--log", "summary"}, "7");
  ProbeRun run = Spawn(dir_, argv, {"TUNEDB_DEVICE_KEY=" + device_.ToText()});
  EXPECT_EQ(run.exit_code, 7) << run.err;
  ASSERT_TRUE(run.out.is_object()) << run.err;
  EXPECT_EQ(run.out["perf"][0]["algo"], Tuned(Key(ConvOp::kForward)).algo);
  EXPECT_EQ(run.out["real_calls"]["fwd_find_ex"], 0);
  EXPECT_THAT(run.err, HasSubstr("1 calls: 1 hits"));
}

TEST_F(PreloadTest, TunedbRunPutsThePreloadBeforeTheCallersOwn) {
  ProbeRun run =
      Spawn(dir_,
            {TUNEDB_CLI_PATH, "--address", "unix:/x.sock", "run", "/bin/sh",
             "-c", "printf '%s|%s' \"$LD_PRELOAD\" \"$TUNEDB_ADDRESS\""},
            {"LD_PRELOAD=libm.so.6"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(ReadFile(dir_.File("out" + std::to_string(RunsSoFar()))),
            std::string(PRELOAD_PATH) + ":libm.so.6|unix:/x.sock");
}

TEST_F(PreloadTest, TunedbRunHasHelp) {
  ProbeRun run = Spawn(dir_, {TUNEDB_CLI_PATH, "run", "--help"}, {});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_THAT(ReadFile(dir_.File("out" + std::to_string(RunsSoFar()))),
              HasSubstr("tunedb run [OPTIONS] [--] CMD"));
}

// --- Pins (docs/pins.md) -----------------------------------------------------

// `tunedb run --pin PIN` for the probe's find_ex, against `address`.
std::vector<std::string> PinnedRunArgv(const std::string& address,
                                       const std::string& pin,
                                       std::vector<std::string> more = {}) {
  std::vector<std::string> argv = {TUNEDB_CLI_PATH, "--address", address,
                                   "run", "--pin", pin};
  argv.insert(argv.end(), more.begin(), more.end());
  argv.push_back("--");
  argv.push_back(PROBE_PATH);
  argv.insert(argv.end(), kShape.begin(), kShape.end());
  argv.push_back("--call");
  argv.push_back("find_ex");
  return argv;
}

TEST_F(PreloadTest, APinRecordedOnceIsFollowedLaterWithoutADaemon) {
  const ProblemKey key = Key(ConvOp::kForward);
  Tune(key);
  const std::string pin = dir_.File("job.pin");
  const std::vector<std::string> env = {
      "TUNEDB_DEVICE_KEY=" + device_.ToText(),
      "TUNEDB_PRELOAD_LOOKUP_MS=10000"};
  // Recorded by a relative path, by a program that works in another folder:
  // the pin lands where the path names from tunedb's folder.
  std::vector<std::string> relative = PinnedRunArgv(server_->address(), pin);
  for (std::string& a : relative) {
    if (a == pin) a = "job.pin";
  }
  const auto program = std::find(relative.begin(), relative.end(), "--") + 1;
  relative.insert(program, {"/bin/sh", "-c", "cd / && exec \"$0\" \"$@\""});
  relative.insert(relative.begin(),
                  {"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", dir_.path()});
  ProbeRun record = Spawn(dir_, relative, env);
  EXPECT_EQ(record.exit_code, 0) << record.err;
  EXPECT_THAT(record.err, HasSubstr("recording the program's answers"));
  EXPECT_THAT(record.err, HasSubstr("recorded"));
  absl::StatusOr<PinFile> file = ReadPinFile(pin);
  ASSERT_TRUE(file.ok()) << file.status() << record.err;
  EXPECT_EQ(file->device, device_);
  EXPECT_EQ(file->entries.size(), 2u);  // fastest and deterministic

  // No daemon at this address: the answers come from the pin alone.
  ProbeRun follow =
      Spawn(dir_, PinnedRunArgv("unix:" + dir_.File("none.sock"), pin), env);
  EXPECT_EQ(follow.exit_code, 0) << follow.err;
  EXPECT_THAT(follow.err, HasSubstr("following the pin"));
  EXPECT_EQ(follow.out["perf"], record.out["perf"]);
  EXPECT_EQ(follow.out["perf"][0]["algo"], Tuned(key).algo);
  EXPECT_EQ(follow.out["real_calls"]["fwd_find_ex"], 0);
  EXPECT_THAT(follow.err, HasSubstr("answers from it, 0 problems not in it"));
}

TEST_F(PreloadTest, ARecordingRunWhosePinCannotBeWrittenSaysSoAndExitsEight) {
  const ProblemKey key = Key(ConvOp::kForward);
  Tune(key);
  // Its folder does not exist: the program runs, the pin cannot be written.
  const std::string pin = dir_.File("no-such-folder/job.pin");
  ProbeRun record = Spawn(dir_, PinnedRunArgv(server_->address(), pin),
                          {"TUNEDB_DEVICE_KEY=" + device_.ToText(),
                           "TUNEDB_PRELOAD_LOOKUP_MS=10000"});
  EXPECT_EQ(record.exit_code, 8) << record.err;  // kExitNotWritten
  EXPECT_THAT(record.err, HasSubstr("the pin " + pin + " was NOT recorded"));
  EXPECT_FALSE(ReadPinFile(pin).ok());
}

TEST_F(PreloadTest, APinnedRunAnswersAProblemThePinLacksWithTheHeuristicList) {
  PinFile empty;
  empty.device = device_;
  empty.made_by = "test";
  const std::string pin = dir_.File("empty.pin");
  ASSERT_TRUE(MergePinFile(pin, empty).ok());
  ProbeRun run = Spawn(dir_, PinnedRunArgv("unix:/nonexistent.sock", pin),
                       {"TUNEDB_DEVICE_KEY=" + device_.ToText()});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  // Not benchmarked: cuDNN's heuristic order, the same in every process.
  EXPECT_EQ(run.out["real_calls"]["fwd_find_ex"], 0);
  EXPECT_EQ(run.out["real_calls"]["fwd_get_v7"], 1);
  EXPECT_EQ(run.out["perf"][0]["algo"], fake_cudnn::kHeuristicList[0].algo);
  EXPECT_THAT(run.err, HasSubstr("1 not pinned (cuDNN's first heuristic"));
  EXPECT_THAT(run.err, HasSubstr("0 answers from it, 1 problems not in it"));
}

TEST_F(PreloadTest, APinOfAnotherCudnnStopsTheProgramUnlessWarnedOf) {
  PinFile other;
  other.device = device_;
  other.device.cudnn_version = 91400;
  other.made_by = "test";
  const std::string pin = dir_.File("old.pin");
  ASSERT_TRUE(MergePinFile(pin, other).ok());
  const std::vector<std::string> env = {"TUNEDB_DEVICE_KEY=" +
                                        device_.ToText()};
  ProbeRun refused =
      Spawn(dir_, PinnedRunArgv("unix:/nonexistent.sock", pin), env);
  EXPECT_EQ(refused.exit_code, kPinRefusedExitCode) << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("cuDNN 9.14.0 in the pin, 9.19.0 here"));
  EXPECT_THAT(refused.err, HasSubstr("stopping the program"));
  EXPECT_FALSE(refused.out.is_object());  // it printed nothing

  ProbeRun warned = Spawn(
      dir_,
      PinnedRunArgv("unix:/nonexistent.sock", pin, {"--pin-mismatch", "warn"}),
      env);
  EXPECT_EQ(warned.exit_code, 0) << warned.err;
  EXPECT_THAT(warned.err, HasSubstr("warning: the pin"));
  EXPECT_THAT(warned.err, HasSubstr("following it anyway"));
}

TEST_F(PreloadTest, AFollowedPinOfBeforeDigestsIsNamedUnsealedInTheExitLine) {
  PinFile p;
  p.device = device_;
  p.made_by = "test";
  PinEntry entry;
  entry.problem = Key(ConvOp::kForward).problem;
  entry.source = PinnedSource::kTuned;
  entry.answer.algo = 1;
  p.entries.push_back(entry);
  const std::string sealed = dir_.File("sealed.pin");
  ASSERT_TRUE(MergePinFile(sealed, p).ok());
  const std::string unsealed = dir_.File("unsealed.pin");
  std::ofstream(unsealed) << testing_util::WithoutPinDigests(FormatPin(p));
  ASSERT_FALSE(ReadPinFile(unsealed)->sealed);
  // Set by hand, without `tunedb run` (which warns itself): the exit line
  // says so.
  auto follow = [&](const std::string& pin) {
    return Probe({"--call", "find_ex"},
                 {"TUNEDB_PIN=" + pin, "TUNEDB_PIN_MODE=follow"});
  };
  ProbeRun old = follow(unsealed);
  EXPECT_EQ(old.exit_code, 0) << old.err;
  EXPECT_EQ(old.out["perf"][0]["algo"], 1);  // followed as it reads
  EXPECT_THAT(old.err, HasSubstr("pin " + unsealed + " followed: "));
  EXPECT_THAT(old.err, HasSubstr("; unsealed: " +
                                 UnsealedPinWarning(*ReadPinFile(unsealed),
                                                    unsealed)));
  ProbeRun current = follow(sealed);
  EXPECT_EQ(current.exit_code, 0) << current.err;
  EXPECT_THAT(current.err, HasSubstr("pin " + sealed + " followed: "));
  EXPECT_THAT(current.err, Not(HasSubstr("unsealed")));
  EXPECT_THAT(current.err, Not(HasSubstr("digests")));
}

TEST_F(PreloadTest, APinCutShortIsRefusedBeforeOrWhenTheProgramStarts) {
  PinFile p;
  p.device = device_;
  p.made_by = "test";
  const std::string pin = dir_.File("cut.pin");
  const std::string text = FormatPin(p);
  std::ofstream(pin) << text.substr(0, text.size() / 2);
  const std::vector<std::string> env = {"TUNEDB_DEVICE_KEY=" +
                                        device_.ToText()};
  ProbeRun run = Spawn(dir_, PinnedRunArgv("unix:/nonexistent.sock", pin), env);
  EXPECT_EQ(run.exit_code, kPinRefusedExitCode) << run.err;
  EXPECT_THAT(run.err, HasSubstr("refusing the pin"));
  EXPECT_FALSE(run.out.is_object());  // the program never started

  // Set by hand, without `tunedb run`: the preload refuses it itself.
  std::vector<std::string> argv = {PROBE_PATH};
  argv.insert(argv.end(), kShape.begin(), kShape.end());
  argv.insert(argv.end(), {"--call", "find_ex"});
  auto probe_with = [&](const std::string& mode) {
    std::vector<std::string> with = PreloadEnv();
    with.push_back("TUNEDB_PIN=" + pin);
    with.push_back("TUNEDB_PIN_MODE=" + mode);
    return Spawn(dir_, argv, with);
  };
  ProbeRun direct = probe_with("follow");
  EXPECT_EQ(direct.exit_code, kPinRefusedExitCode) << direct.err;
  EXPECT_THAT(direct.err, HasSubstr("not a whole pin"));
  ProbeRun bad_mode = probe_with("replay");
  EXPECT_EQ(bad_mode.exit_code, kPinRefusedExitCode) << bad_mode.err;
  EXPECT_THAT(bad_mode.err, HasSubstr("TUNEDB_PIN_MODE=replay"));
}

}  // namespace
}  // namespace tunedb
