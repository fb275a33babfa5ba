// Every other subcommand against an in-process daemon: devices, stats,
// tune, lookup, query, show, export, import, invalidate, doctor; exit codes
// for usage errors and an unreachable daemon.
#include <stdlib.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "common/valid_key.h"
#include "gtest/gtest.h"
#include "store/record_json.h"
#include "tests/testing/test_values.h"
#include "tests/tuner/cli_test_fixture.h"
#include "tuner/exit_codes.h"
#include "tuner/interrupt.h"

namespace tunedb::tuner {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kProblem[] =
    "op=fwd n=8 c=16 k=32 in=28x28 filt=3x3 pad=1x1 stride=1x1 dil=1x1 "
    "groups=1 mode=xcorr in_type=f32 out_type=f32 compute=f32 layout=nchw "
    "tc=1 tf32=1";

// Small enough that the simulated host cost per call ranks the algorithms
// differently from their GPU time.
constexpr char kHostBoundProblem[] =
    "op=fwd n=1 c=3 k=64 in=32x32 filt=3x3 pad=1x1 stride=1x1 dil=1x1 "
    "groups=1 mode=xcorr in_type=f32 out_type=f32 compute=f32 layout=nchw "
    "tc=1 tf32=1";

class CommandsTest : public CliTest {
 protected:
  // Stores a few records: VGG-16 at a small input, forward and
  // backward-filter, two batch sizes.
  int64_t Fill() {
    CliResult r = Run({"--json", "prewarm", "--model", "vgg16", "--input", "32",
                       "--batch", "1,2", "--ops", "fwd,bwd_filter"});
    EXPECT_EQ(r.code, kExitOk) << r.err;
    return r.Json()["shapes"].get<int64_t>();
  }
};

TEST_F(CommandsTest, Devices) {
  CliResult r = Run({"devices"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Simulated GPU"));
  EXPECT_THAT(r.out, HasSubstr("finder: simulated"));
  CliResult csv = Run({"devices", "--csv"});
  ASSERT_EQ(csv.code, kExitOk);
  EXPECT_EQ(csv.out.rfind("ordinal,gpu,cc,sms,cudnn,cuda,", 0), 0u) << csv.out;
  CliResult j = Run({"--json", "devices"});
  ASSERT_EQ(j.code, kExitOk);
  ASSERT_EQ(j.Json()["devices"].size(), 1u);
  EXPECT_EQ(j.Json()["devices"][0]["gpu"], "Simulated GPU");
}

TEST_F(CommandsTest, Stats) {
  const int64_t n = Fill();
  CliResult j = Run({"--json", "stats"});
  ASSERT_EQ(j.code, kExitOk) << j.err;
  EXPECT_EQ(j.Json()["records"], n);
  EXPECT_EQ(j.Json()["searches"], n);
  EXPECT_EQ(j.Json()["finder"], "simulated");
  CliResult r = Run({"stats"});
  ASSERT_EQ(r.code, kExitOk);
  EXPECT_THAT(r.out, HasSubstr("records"));
  EXPECT_THAT(r.out, HasSubstr(db_path_));
  EXPECT_THAT(r.out, Not(HasSubstr("drop-in")));  // nothing reported yet
}

TEST_F(CommandsTest, StatsCountTheMissesAnsweredByPrediction) {
  Fill();
  EXPECT_EQ(Run({"--json", "stats"}).Json()["predictions"], 0);
  CliResult q = Run({"--json", "query", "--limit", "1"});
  ASSERT_EQ(q.code, kExitOk) << q.err;
  absl::StatusOr<ProblemKey> key =
      ProblemKey::Parse(q.Json()[0]["key"].get<std::string>());
  ASSERT_TRUE(key.ok()) << key.status();
  key->problem.n = 3;  // batches 1 and 2 are stored
  ASSERT_TRUE(server_->core()
                  .Lookup(ValidKey::FromValidated(*key), Constraints(),
                          Predictors::kAll)
                  .ok());
  EXPECT_EQ(Run({"--json", "stats"}).Json()["predictions"], 1);
  EXPECT_THAT(Run({"stats"}).out, HasSubstr("(1 answered by prediction)"));
}

TEST_F(CommandsTest, StatsShowWhatTheDropInReported) {
  server_->core().reported().Add(
      {{"preload.calls", 68}, {"preload.hit", 60}, {"preload.miss", 8}});
  CliResult r = Run({"stats"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("1 reports, 68 calls: 60 hit, 8 miss"));
  CliResult j = Run({"--json", "stats"});
  ASSERT_EQ(j.code, kExitOk);
  EXPECT_EQ(j.Json()["reported"]["preload.hit"], 60);
  EXPECT_EQ(j.Json()["reports"], 1);
}

TEST_F(CommandsTest, TuneThenLookup) {
  CliResult missing = Run({"lookup", kProblem});
  EXPECT_EQ(missing.code, kExitNotFound);
  EXPECT_THAT(missing.err, HasSubstr("not found"));

  CliResult tune = Run({"--json", "tune", kProblem});
  ASSERT_EQ(tune.code, kExitOk) << tune.err;
  EXPECT_TRUE(tune.Json()["searched"].get<bool>());
  EXPECT_FALSE(tune.Json()["choice"].is_null());
  const std::string key = tune.Json()["record"]["key"];

  CliResult again = Run({"tune", kProblem});
  ASSERT_EQ(again.code, kExitOk);
  EXPECT_THAT(again.out, HasSubstr("source    database"));

  CliResult lookup = Run({"lookup", key, "--max-workspace", "0"});
  ASSERT_EQ(lookup.code, kExitOk) << lookup.err;
  EXPECT_THAT(lookup.out, HasSubstr("choice"));
  CliResult details = Run({"lookup", kProblem, "--details"});
  EXPECT_THAT(details.out, HasSubstr("ranking"));
  EXPECT_EQ(SearchesRun(), 1);
}

TEST_F(CommandsTest, TwoTunesAtOnceSayWhichSearchedAndWhichWaited) {
  // A search long enough for the second process to join it.
  StartServer("slow_ms=1500");
  CliResult a, b;
  std::thread other([&] { b = Run({"tune", kProblem}); });
  a = Run({"tune", kProblem});
  other.join();
  ASSERT_EQ(a.code, kExitOk) << a.err;
  ASSERT_EQ(b.code, kExitOk) << b.err;
  const std::string both = a.out + b.out;
  EXPECT_THAT(both, HasSubstr("source    searched now ("));
  EXPECT_THAT(both, HasSubstr("source    another call's search, waited for ("));
  EXPECT_THAT(both, Not(HasSubstr("source    database")));
  EXPECT_EQ(SearchesRun(), 1);
  CliResult later = Run({"--json", "tune", kProblem});
  ASSERT_EQ(later.code, kExitOk) << later.err;
  EXPECT_FALSE(later.Json()["searched"].get<bool>());
  EXPECT_FALSE(later.Json()["waited_for_search"].get<bool>());
}

TEST_F(CommandsTest, LaunchModeGraphChoosesByGpuTime) {
  CliResult tune = Run({"--json", "tune", kHostBoundProblem});
  ASSERT_EQ(tune.code, kExitOk) << tune.err;
  const nlohmann::json results = tune.Json()["record"]["results"];
  // The fastest OK result by each cost, from the stored ranking.
  int by_launch = -1, by_gpu = -1;
  double best_launch = 0, best_gpu = 0;
  for (const auto& r : results) {
    if (r["status"] != "ok") continue;
    const double launch = r["launch"]["median_ms"];
    const double gpu = r["gpu"]["median_ms"];
    if (by_launch < 0 || launch < best_launch) {
      by_launch = r["algo"];
      best_launch = launch;
    }
    if (by_gpu < 0 || gpu < best_gpu) {
      by_gpu = r["algo"];
      best_gpu = gpu;
    }
  }
  ASSERT_NE(by_launch, by_gpu) << "the simulated costs disagree on this shape";

  CliResult direct = Run({"--json", "lookup", kHostBoundProblem});
  ASSERT_EQ(direct.code, kExitOk) << direct.err;
  EXPECT_EQ(direct.Json()["choice"]["algo"], by_launch);
  CliResult graph =
      Run({"--json", "lookup", kHostBoundProblem, "--launch-mode", "graph"});
  ASSERT_EQ(graph.code, kExitOk) << graph.err;
  EXPECT_EQ(graph.Json()["choice"]["algo"], by_gpu);
  CliResult text = Run({"lookup", kHostBoundProblem, "--launch-mode", "graph"});
  EXPECT_THAT(text.out, HasSubstr("(GPU time)"));

  CliResult bad = Run({"lookup", kHostBoundProblem, "--launch-mode", "eager"});
  EXPECT_EQ(bad.code, kExitUsage);
  EXPECT_THAT(bad.err, HasSubstr("--launch-mode"));
  EXPECT_EQ(SearchesRun(), 1);
}

TEST_F(CommandsTest, BadKeyNamesTheField) {
  CliResult r = Run({"tune", "op=fwd n=8 c=16"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("KEY: "));
  CliResult gpu = Run({"lookup", kProblem, "--gpu", "Radeon"});
  EXPECT_EQ(gpu.code, kExitUsage);
  EXPECT_THAT(gpu.err, HasSubstr("--gpu 'Radeon'"));
}

// The best_algo column of `tunedb query --csv ARGS` for a one-record file.
std::string BestAlgo(const CliResult& csv) {
  std::istringstream lines(csv.out);
  std::string header, row;
  std::getline(lines, header);
  std::getline(lines, row);
  const std::vector<std::string> names = absl::StrSplit(header, ',');
  const std::vector<std::string> cells = absl::StrSplit(row, ',');
  for (size_t i = 0; i < names.size() && i < cells.size(); ++i) {
    if (names[i] == "best_algo") return cells[i];
  }
  return "";
}

TEST_F(CommandsTest, QueryShowsTheChoiceOfAProgramThatCompilesOrLoadsPlans) {
  // Engine 40 compiles at run time (600 ms) and is 0.01 ms faster per call
  // than engine 41; only engine 40 has a kept plan.
  Record r = testing_util::GraphTestRecord(1);
  r.results.resize(2);
  r.results[0].algo = 40;
  r.results[0].launch = {0.10, 0, 3};
  r.results[0].build_ms = 600;
  r.results[0].heuristic_rank = 0;
  r.results[1].algo = 41;
  r.results[1].status = AlgoStatus::kOk;
  r.results[1].launch = {0.11, 0, 3};
  r.results[1].behavior_notes = 0;
  r.results[1].plan.clear();
  const std::string path = WriteFile("one.jsonl", RecordToJson(r) + "\n");
  ASSERT_EQ(Run({"import", path}).code, kExitOk);
  // Over 10,000 calls its compile costs 0.06 ms a call: engine 41.
  EXPECT_EQ(BestAlgo(Run({"query", "--csv"})), "41");
  EXPECT_EQ(BestAlgo(Run({"query", "--csv", "--compile-horizon", "0"})), "40");
  EXPECT_EQ(BestAlgo(Run({"query", "--csv", "--loads-plans"})), "40");
  CliResult bad = Run({"query", "--compile-horizon", "-1"});
  EXPECT_EQ(bad.code, kExitUsage);
}

TEST_F(CommandsTest, QueryTableJsonCsvAndFilters) {
  const int64_t n = Fill();
  CliResult table = Run({"query"});
  ASSERT_EQ(table.code, kExitOk) << table.err;
  EXPECT_THAT(table.out, HasSubstr("best ms"));
  EXPECT_THAT(table.out,
              HasSubstr(absl::StrCat(n, " record(s) matching (everything)")));

  CliResult all = Run({"--json", "query"});
  ASSERT_EQ(all.code, kExitOk);
  EXPECT_EQ(all.Json().size(), static_cast<size_t>(n));

  CliResult fwd = Run({"--json", "query", "--op", "fwd", "--filter", "n=2"});
  ASSERT_EQ(fwd.code, kExitOk) << fwd.err;
  ASSERT_FALSE(fwd.Json().empty());
  for (const auto& r : fwd.Json()) {
    EXPECT_EQ(r["problem"]["op"], "fwd");
    EXPECT_EQ(r["problem"]["n"], 2);
  }
  EXPECT_LT(fwd.Json().size(), static_cast<size_t>(n));

  CliResult csv = Run({"query", "--csv", "--gpu", "Simulated GPU"});
  ASSERT_EQ(csv.code, kExitOk);
  std::istringstream lines(csv.out);
  std::string header;
  std::getline(lines, header);
  EXPECT_EQ(header.rfind("id,key_hash,gpu,", 0), 0u) << header;
  int rows = 0;
  for (std::string line; std::getline(lines, line);) ++rows;
  EXPECT_EQ(rows, n);

  EXPECT_EQ(Run({"--json", "query", "--since", "1h"}).Json().size(),
            static_cast<size_t>(n));
  EXPECT_EQ(Run({"--json", "query", "--until", "1h"}).Json().size(), 0u);
  EXPECT_EQ(Run({"--json", "query", "--limit", "3"}).Json().size(), 3u);

  CliResult bad = Run({"query", "--filter", "colour=red"});
  EXPECT_EQ(bad.code, kExitUsage);
  EXPECT_THAT(bad.err, HasSubstr("colour"));
}

TEST_F(CommandsTest, ShowByIdHashAndKey) {
  Fill();
  nlohmann::json first = Run({"--json", "query", "--limit", "1"}).Json()[0];
  const std::string id = std::to_string(first["id"].get<int64_t>());
  for (const std::string& arg : {id, first["key_hash"].get<std::string>(),
                                 first["key"].get<std::string>()}) {
    CliResult r = Run({"show", arg});
    ASSERT_EQ(r.code, kExitOk) << arg << ": " << r.err;
    EXPECT_THAT(r.out, HasSubstr(first["key"].get<std::string>()));
    EXPECT_THAT(r.out, HasSubstr("ranking"));
    EXPECT_THAT(r.out, HasSubstr("launch ms"));
    EXPECT_THAT(r.out, HasSubstr("gpu ms"));
    EXPECT_THAT(r.out, HasSubstr("host ms"));
    EXPECT_THAT(r.out, HasSubstr("ranked by  launch time"));
    EXPECT_THAT(r.out, HasSubstr("deterministic"));
    for (const char* set :
         {"unlimited workspace", "workspace <= 0 B", "workspace <= 64 MiB",
          "workspace <= 1 GiB", "deterministic only", "graph launches"}) {
      EXPECT_THAT(r.out, HasSubstr(set));
    }
  }
  CliResult by_hash = Run({"--json", "query", "--filter",
                           "hash=" + first["key_hash"].get<std::string>()});
  ASSERT_EQ(by_hash.code, kExitOk) << by_hash.err;
  ASSERT_EQ(by_hash.Json().size(), 1u);
  EXPECT_EQ(by_hash.Json()[0]["id"], first["id"]);
  CliResult j = Run({"--json", "show", id});
  ASSERT_EQ(j.code, kExitOk);
  EXPECT_EQ(j.Json()["choices"].size(), 6u);
  EXPECT_EQ(j.Json()["choices"][5]["launch_mode"], "graph");
  EXPECT_EQ(j.Json()["stale"], false);
  EXPECT_FALSE(j.Json()["results"].empty());
  EXPECT_TRUE(j.Json()["results"][0].contains("launch"));
  EXPECT_EQ(Run({"show", "99999"}).code, kExitNotFound);
  EXPECT_EQ(Run({"show", "0123456789abcdef"}).code, kExitNotFound);
}

TEST_F(CommandsTest, ExportInvalidateImportRoundTrip) {
  const int64_t n = Fill();
  const std::string path = dir_ + "/export.jsonl";
  CliResult exp = Run({"export", "-o", path});
  ASSERT_EQ(exp.code, kExitOk) << exp.err;
  EXPECT_THAT(exp.out, HasSubstr(absl::StrCat("exported ", n)));
  CliResult to_stdout = Run({"export", "--op", "fwd"});
  ASSERT_EQ(to_stdout.code, kExitOk);
  EXPECT_EQ(std::count(to_stdout.out.begin(), to_stdout.out.end(), '\n'),
            n / 2);

  CliResult del = Run({"invalidate", "--all", "--yes"});
  ASSERT_EQ(del.code, kExitOk) << del.err;
  EXPECT_THAT(del.out, HasSubstr(absl::StrCat("deleted ", n)));
  EXPECT_EQ(StoredRecords(), 0);

  CliResult imp = Run({"--json", "import", path});
  ASSERT_EQ(imp.code, kExitOk) << imp.err;
  EXPECT_EQ(imp.Json()["imported"], n);
  EXPECT_EQ(StoredRecords(), n);
  EXPECT_EQ(SearchesRun(), n);  // imported, not searched again
}

TEST_F(CommandsTest, ImportRejectsAreAllOrNothing) {
  Fill();
  const std::string path = dir_ + "/export.jsonl";
  ASSERT_EQ(Run({"export", "-o", path}).code, kExitOk);
  std::stringstream all;
  all << std::ifstream(path).rdbuf();
  ASSERT_EQ(Run({"invalidate", "--all", "--yes"}).code, kExitOk);
  // A damaged copy: a blank line and a broken record after the good ones.
  const std::string bad =
      WriteFile("bad.jsonl", all.str() + "\n{\"broken\": \n");
  int total_lines = 0;
  {
    std::ifstream count(bad);
    for (std::string l; std::getline(count, l);) ++total_lines;
  }
  CliResult r = Run({"import", bad});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat("bad.jsonl:", total_lines, ":")));
  EXPECT_THAT(r.err, HasSubstr("nothing was imported"));
  EXPECT_EQ(StoredRecords(), 0);
}

TEST_F(CommandsTest, InterruptedImportImportsNothing) {
  Fill();
  const std::string path = dir_ + "/export.jsonl";
  ASSERT_EQ(Run({"export", "-o", path}).code, kExitOk);
  ASSERT_EQ(Run({"invalidate", "--all", "--yes"}).code, kExitOk);
  RequestInterrupt();  // Ctrl-C
  CliResult r = Run({"import", path});
  ClearInterrupt();
  EXPECT_EQ(r.code, kExitInterrupted);
  EXPECT_THAT(r.err, HasSubstr("interrupted"));
  EXPECT_THAT(r.err, HasSubstr("nothing was imported"));
  EXPECT_EQ(StoredRecords(), 0);
}

TEST_F(CommandsTest, InvalidateConfirmation) {
  const int64_t n = Fill();
  // Not a terminal and no --yes: refused.
  CliResult refused = Run({"invalidate", "op=fwd"});
  EXPECT_EQ(refused.code, kExitUsage);
  EXPECT_THAT(refused.err, HasSubstr("--yes"));
  EXPECT_EQ(StoredRecords(), n);
  // A terminal that answers no.
  CliResult no = Run({"invalidate", "op=fwd"}, "n\n", /*stdin_tty=*/true);
  EXPECT_EQ(no.code, kExitUsage);
  EXPECT_THAT(no.err, HasSubstr("[y/N]"));
  EXPECT_EQ(StoredRecords(), n);
  // Yes.
  CliResult yes = Run({"invalidate", "op=fwd", "n=1"}, "y\n", true);
  ASSERT_EQ(yes.code, kExitOk) << yes.err;
  EXPECT_EQ(StoredRecords(), n - n / 4);
  // Nothing matches: nothing to ask.
  CliResult none = Run({"invalidate", "op=fwd", "n=1"});
  EXPECT_EQ(none.code, kExitOk);
  EXPECT_THAT(none.out, HasSubstr("no records match"));
  // No filter at all is refused without --all.
  EXPECT_EQ(Run({"invalidate", "--yes"}).code, kExitUsage);
  EXPECT_EQ(Run({"invalidate", "colour=red", "--yes"}).code, kExitUsage);
}

TEST_F(CommandsTest, Doctor) {
  Fill();
  CliResult r = Run({"doctor", "--db", db_path_});
  ASSERT_EQ(r.code, kExitOk) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("daemon reachable"));
  EXPECT_THAT(r.out, HasSubstr("GPUs visible"));
  EXPECT_THAT(r.out, HasSubstr("quick_check ok"));
  EXPECT_THAT(r.out, Not(HasSubstr("FAIL")));

  const std::string junk = WriteFile("junk.db", std::string(8192, 'x'));
  CliResult bad = Run({"--json", "doctor", "--db", junk});
  EXPECT_EQ(bad.code, kExitError);
  EXPECT_FALSE(bad.Json()["ok"].get<bool>());
}

TEST_F(CommandsTest, UnreachableDaemon) {
  const std::vector<std::string> base = {
      "--address", "unix:" + dir_ + "/nobody.sock", "--timeout", "1"};
  for (const std::vector<std::string>& cmd :
       std::vector<std::vector<std::string>>{{"stats"},
                                             {"devices"},
                                             {"query"},
                                             {"doctor"},
                                             {"prewarm", "--model", "vgg16"}}) {
    std::vector<std::string> args = base;
    args.insert(args.end(), cmd.begin(), cmd.end());
    CliResult r = RunRaw(args);
    EXPECT_EQ(r.code, kExitUnreachable) << cmd[0] << ": " << r.err;
  }
}

TEST_F(CommandsTest, AddressFromTheEnvironment) {
  setenv("TUNEDB_ADDRESS", server_->address().c_str(), 1);
  CliResult r = RunRaw({"--json", "stats"});
  unsetenv("TUNEDB_ADDRESS");
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.Json()["finder"], "simulated");
}

TEST_F(CommandsTest, HelpAndUsage) {
  CliResult help = RunRaw({"--help"});
  EXPECT_EQ(help.code, kExitOk);
  EXPECT_THAT(help.out, HasSubstr("Exit codes:"));
  for (const char* cmd :
       {"prewarm", "models", "query", "show", "export", "import", "stats",
        "devices", "invalidate", "doctor", "tune", "lookup"}) {
    CliResult r = RunRaw({cmd, "--help"});
    EXPECT_EQ(r.code, kExitOk) << cmd;
    EXPECT_THAT(r.out, HasSubstr("Usage")) << cmd;
  }
  EXPECT_EQ(RunRaw({"--no-such-flag"}).code, kExitUsage);
  EXPECT_EQ(RunRaw({}).code, kExitUsage);
  EXPECT_EQ(RunRaw({"show"}).code, kExitUsage);
}

TEST_F(CommandsTest, UnknownSubcommandIsAUsageError) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {"nosuchcmd"},
           {"nosuchcmd", "--help"},
           {"nosuchcmd", "--version"},
           {"--json", "nosuchcmd", "--json"},
           {"--timeout", "5", "nosuchcmd", "-h"},
           {"--address=unix:/nowhere", "nosuchcmd", "--help-all"}}) {
    CliResult r = RunRaw(args);
    EXPECT_EQ(r.code, kExitUsage) << args.size() << " " << r.out;
    EXPECT_THAT(r.err, HasSubstr("unknown subcommand 'nosuchcmd'"));
    EXPECT_EQ(r.out, "");
  }
  // An option's value is not taken for the subcommand.
  CliResult timeout = RunRaw({"--timeout", "5", "models", "--help"});
  EXPECT_EQ(timeout.code, kExitOk) << timeout.err;
  EXPECT_THAT(timeout.out, HasSubstr("Usage"));
}

}  // namespace
}  // namespace tunedb::tuner
