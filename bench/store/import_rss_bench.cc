// import_rss_bench: a million-record import through the real programs, with
// the figures of the reliability limits (docs/cli.md, "Limits").
//
// It writes a JSON-lines file of --records records (a few of them under a
// rare cuDNN version), starts `tunedbd --finder simulated` on an empty
// database, runs `tunedb import FILE` and reads the peak resident memory of
// both (the CLI's from wait4(), the daemon's VmHWM from /proc). Then: the
// WAL's size right after the import, the time of a query whose filter names
// a rare key field, and the daemon's start-up time on the filled database
// (until its socket answers). It prints each figure with its limit or its
// reference (the figure measured before the fix, issue #15) and exits 1 if
// a memory limit is exceeded.
//
//   import_rss_bench [--records N] [--bin DIR] [--work DIR] [--keep] [--cold]
//
// --cold also times a start-up with the page cache dropped (root only: it
// writes /proc/sys/vm/drop_caches, which slows everything else on the
// machine for a while).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/bench_daemon.h"
#include "store/record_json.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {
namespace {

using bench::Clock;
using bench::Daemon;
using bench::FileSize;
using bench::PeakRssMib;
using bench::Seconds;
using bench::Spawn;
using bench::StopDaemon;

// tunedbd on `work`'s database.
Daemon StartDaemon(const std::string& bin, const std::string& work) {
  return bench::StartDaemon(bin, work + "/tunedb.db", work);
}

constexpr double kRssLimitMib = 256;
// Issue #15, before the fix: 1,000,000 records.
constexpr double kDaemonRssBeforeMib = 1153;
constexpr double kCliRssBeforeMib = 2048;  // 2.0 GB for a 2.0 GB file
constexpr double kStartupBeforeWarmS = 3;
constexpr double kWalBeforeBytes = 1.06e9;
constexpr double kFilterBeforeS = 11.5;
constexpr int kRareRecords = 10;

Record MakeRecord(int64_t i, int64_t count) {
  Record r;
  DeviceKey& d = r.key.device;
  d.gpu_model = "NVIDIA H200";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  // A few records, spread over the file, are of a rare cuDNN version.
  const bool rare = i % (count / kRareRecords) == 7;
  d.cudnn_version = rare ? 80907 : 91900;
  d.cuda_runtime_version = 13000;
  ConvProblem& p = r.key.problem;
  p.op = ConvOp::kForward;
  p.spatial_dims = 2;
  p.n = 1 + i % 1024;
  p.c = 1 + i / 1024;
  p.k = 64;
  p.input = {56, 56, 0};
  p.filter = {3, 3, 0};
  p.padding = {1, 1, 0};
  p.stride = {1, 1, 0};
  p.dilation = {1, 1, 0};
  p.groups = 1;
  p.layout = Layout::kNCHW;
  r.measured_at_us = 1764547200000000 + i;
  r.host = "bench-host";
  r.gpu_uuid = "GPU-00000000-0000-0000-0000-000000000000";
  r.driver_version = "580.65.06";
  r.finder = "cudnn";
  r.repeats = 10;
  r.workspace_cap_bytes = int64_t{1} << 30;
  r.search_ms = 120.5;
  r.verified = true;
  r.timing_version = 2;
  for (int algo = 0; algo < 4; ++algo) {
    AlgoResult a;
    a.algo = algo;
    a.math_type = algo % 2 ? MathType::kTensorOp : MathType::kDefault;
    a.status = AlgoStatus::kOk;
    a.launch = {1.0 + algo, 0.01, 10};
    a.gpu = {0.8 + algo, 0.01, 10};
    a.host = {0.2, 0.01, 10};
    a.workspace_bytes = algo * 1048576;
    a.deterministic = true;
    a.retimed = algo == 0;
    r.results.push_back(a);
  }
  return r;
}

// Runs to the end; returns its exit status and peak RSS (MiB).
int Run(const std::vector<std::string>& args, const std::string& out,
        const std::string& err, double* rss_mib, double* seconds) {
  const auto start = Clock::now();
  pid_t pid = Spawn(args, out, err);
  if (pid < 0) return -1;
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  if (rss_mib != nullptr) *rss_mib = usage.ru_maxrss / 1024.0;
  if (seconds != nullptr) *seconds = Seconds(start);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int Main(int argc, char** argv) {
  int64_t records = 1000000;
  std::string bin;
  std::string work;
  bool keep = false;
  bool cold = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--records" && i + 1 < argc) {
      if (!absl::SimpleAtoi(argv[++i], &records) || records < 100) {
        std::cerr << "--records: a number >= 100\n";
        return 2;
      }
    } else if (arg == "--bin" && i + 1 < argc) {
      bin = argv[++i];
    } else if (arg == "--work" && i + 1 < argc) {
      work = argv[++i];
    } else if (arg == "--keep") {
      keep = true;
    } else if (arg == "--cold") {
      cold = true;
    } else {
      std::cerr << "usage: import_rss_bench [--records N] [--bin DIR] "
                   "[--work DIR] [--keep] [--cold]\n";
      return 2;
    }
  }
  if (bin.empty()) {
    bin = std::filesystem::canonical("/proc/self/exe")
              .parent_path()
              .parent_path()
              .parent_path()
              .string() +
          "/bin";
  }
  const bool own_work = work.empty();
  if (own_work) {
    char tmpl[] = "/var/tmp/tunedb-import-bench-XXXXXX";
    work = mkdtemp(tmpl);
  }
  std::filesystem::create_directories(work);
  const std::string file = work + "/import.jsonl";
  {
    std::ofstream out(file);
    for (int64_t i = 0; i < records; ++i) {
      out << RecordToJson(MakeRecord(i, records)) << "\n";
    }
  }
  std::printf("import_rss_bench: %lld records, %.1f MiB of JSON lines\n",
              static_cast<long long>(records), FileSize(file) / 1048576.0);
  std::printf("programs: %s\n", bin.c_str());

  Daemon daemon = StartDaemon(bin, work);
  if (daemon.pid < 0) {
    std::cerr << "tunedbd did not start; see " << work << "/tunedbd.log\n";
    return 1;
  }
  const std::string address = "unix:" + work + "/tunedb.sock";
  double cli_rss = 0, import_s = 0;
  const int rc =
      Run({bin + "/tunedb", "--address", address, "import", file},
          work + "/import.out", work + "/import.err", &cli_rss, &import_s);
  const double daemon_rss = PeakRssMib(daemon.pid);
  const int64_t wal = FileSize(work + "/tunedb.db-wal");
  const int64_t db = FileSize(work + "/tunedb.db");
  double query_s = 0;
  const int query_rc =
      Run({bin + "/tunedb", "--address", address, "--json", "query", "--filter",
           "cudnn=8.9.7", "--limit", "100"},
          work + "/query.out", work + "/query.err", nullptr, &query_s);
  int64_t found = 0;
  {
    std::ifstream out(work + "/query.out");
    std::string line;
    while (std::getline(out, line)) {
      if (line == "  {") ++found;  // one record of the JSON array
    }
  }
  StopDaemon(daemon);
  Daemon again = StartDaemon(bin, work);
  const double startup_s = again.startup_s;
  StopDaemon(again);
  // Cold: with the page cache dropped, where this machine lets us.
  double cold_s = -1;
  if (cold) {
    sync();
    std::ofstream drop("/proc/sys/vm/drop_caches");
    drop << "3\n";
    drop.flush();
    if (drop.good()) {
      drop.close();
      Daemon cold = StartDaemon(bin, work);
      cold_s = cold.startup_s;
      StopDaemon(cold);
    }
  }

  std::printf("import exit code: %d (%.1f s in all)\n", rc, import_s);
  std::printf("daemon peak RSS: %.0f MiB (limit %.0f MiB; before: %.0f MiB)\n",
              daemon_rss, kRssLimitMib, kDaemonRssBeforeMib);
  std::printf("CLI peak RSS:    %.0f MiB (limit %.0f MiB; before: %.0f MiB)\n",
              cli_rss, kRssLimitMib, kCliRssBeforeMib);
  std::printf(
      "WAL after the import: %.1f MiB, database %.1f MiB (before: WAL %.2f "
      "GB until shutdown)\n",
      wal / 1048576.0, db / 1048576.0, kWalBeforeBytes / 1e9);
  std::printf(
      "query --filter cudnn=8.9.7 (%d of %lld records): %lld found in %.2f s, "
      "exit code %d (before: %.1f s)\n",
      kRareRecords, static_cast<long long>(records),
      static_cast<long long>(found), query_s, query_rc, kFilterBeforeS);
  std::printf(
      "daemon start-up on the filled database (warm): %.2f s to its first "
      "answer (before: %.0f s of quick_check alone)\n",
      startup_s, kStartupBeforeWarmS);
  if (cold_s >= 0) {
    std::printf(
        "daemon start-up on the filled database (cold, page cache dropped): "
        "%.2f s (before: 23 s of quick_check alone)\n",
        cold_s);
  } else {
    std::printf(
        "daemon start-up (cold): not measured (needs --cold, and "
        "root to drop the page cache)\n");
  }
  std::printf("the CLI's progress lines:\n");
  {
    std::ifstream err(work + "/import.err");
    std::string line;
    while (std::getline(err, line)) std::printf("  %s\n", line.c_str());
  }
  std::fflush(stdout);
  if (own_work && !keep) std::filesystem::remove_all(work);
  const bool ok = rc == 0 && query_rc == 0 && found == kRareRecords &&
                  daemon_rss > 0 && daemon_rss <= kRssLimitMib &&
                  cli_rss <= kRssLimitMib;
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace tunedb

int main(int argc, char** argv) { return tunedb::Main(argc, argv); }
