// report_daemon_bench: `tunedb report` of a database of --records records
// (tests/tuner/report_records.h's made-up records: two GPU models, two cuDNN
// versions, four results each, sixty days) through the real programs, side
// by side with the other ways to the same page:
//
//   file      the store walked in this process (no daemon, no gRPC) with
//             the read the daemon uses (Store::ReportWalk, in parts on as
//             many threads), aggregated and rendered: the floor;
//   file, one part  the same walk in one part, on one thread: the
//             daemon's way before its walk was split;
//   query     the same with the daemon's former read, the store's Query of
//             whole records (the daemon's way before ReportWalk);
//   daemon    `tunedb report -o FILE` against a real tunedbd: the daemon
//             aggregates next to its store (the Report rpc), the CLI renders;
//   streamed  what `tunedb report` does against a daemon older than the
//             Report rpc: every record over the Query stream, aggregated
//             and rendered in this process (the CLI's own functions).
//
// Each figure is printed with the target (under 5 s and 5 MB at a million
// records) and as a ratio to the daemon's, wall-clock and CPU
// time; also the daemon's peak memory before and after the report.
//
//   report_daemon_bench [--records N] [--bin DIR] [--work DIR] [--keep]
//                       [--no-streamed]
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/bench_daemon.h"
#include "common/report_data.h"
#include "store/store.h"
#include "tests/tuner/report_records.h"
#include "tuner/cli_context.h"
#include "tuner/record_stream.h"
#include "tuner/report_html.h"

namespace tunedb {
namespace {

using bench::Clock;
using bench::FileSize;
using bench::Seconds;

constexpr double kTargetS = 5;
constexpr double kTargetMb = 5;

double Mb(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

struct Flags {
  int64_t records = 1000000;
  std::string bin = "build/bin";
  std::string work;
  bool keep = false;
  bool streamed = true;
};

bool ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--records" && has_value) {
      if (!absl::SimpleAtoi(argv[++i], &f->records)) return false;
    } else if (a == "--bin" && has_value) {
      f->bin = argv[++i];
    } else if (a == "--work" && has_value) {
      f->work = argv[++i];
    } else if (a == "--keep") {
      f->keep = true;
    } else if (a == "--no-streamed") {
      f->streamed = false;
    } else {
      return false;
    }
  }
  return f->records > 0;
}

// The made-up records, staged and committed as one import.
absl::Status MakeDatabase(const std::string& path, int64_t records) {
  Store::Options options;
  options.path = path;
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(options);
  if (!store.ok()) return store.status();
  absl::StatusOr<std::unique_ptr<Store::StagedImport>> import =
      (*store)->BeginImport();
  if (!import.ok()) return import.status();
  for (int64_t i = 0; i < records; ++i) {
    Record r = tuner::SyntheticRecord(i);
    r.id = 0;
    r.host = "bench-host";
    r.driver_version = "580.65.06";
    if (absl::Status s = (*import)->Add(r); !s.ok()) return s;
  }
  absl::StatusOr<int64_t> added = (*import)->Commit(ImportTag());
  return added.ok() ? absl::OkStatus() : added.status();
}

// CPU seconds (user and system) a process has used.
double CpuSeconds(pid_t pid) {
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string text((std::istreambuf_iterator<char>(stat)),
                   std::istreambuf_iterator<char>());
  // Fields 14 and 15 (utime, stime), counted after the command's ")".
  std::istringstream rest(text.substr(text.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i >= 14) ticks += std::atof(field.c_str());
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// A CLI context on `address` with captured streams, as `tunedb` makes one.
struct Cli {
  std::istringstream in;
  std::ostringstream out, err;
  tuner::CliContext ctx;
  explicit Cli(const std::string& address)
      : ctx(tuner::CliIo{&in, &out, &err}) {
    ctx.options().address = address;
  }
};

// The CLI's streamed path (an older daemon's): every record through Query.
bool StreamedReport(const std::string& address, int64_t* records,
                    int64_t* page_bytes) {
  Cli cli(address);
  ReportAggregator aggregator;
  absl::Status s = tuner::ForEachParsedRecord(cli.ctx, v1::Filter(), 0,
                                              [&](Record r) {
                                                aggregator.Add(r);
                                                return true;
                                              });
  if (!s.ok()) {
    std::fprintf(stderr, "streamed: %s\n", s.ToString().c_str());
    return false;
  }
  const ReportData data = aggregator.Finish();
  const std::string html = tuner::RenderReportHtml(
      data, tuner::ReportPage{address, absl::ToUnixMicros(absl::Now()), {}});
  *records = data.records;
  *page_bytes = static_cast<int64_t>(html.size());
  return true;
}

// The store's ReportWalk in `count` parts, their aggregates merged in id
// order, into `into`.
absl::Status WalkInParts(Store& store, int count, ReportAggregator& into) {
  std::vector<ReportAggregator> more(std::max(1, count) - 1);
  std::vector<Store::ReportPart> parts;
  for (size_t i = 0; i <= more.size(); ++i) {
    ReportAggregator& a = i == 0 ? into : more[i - 1];
    parts.push_back({[&a](const ReportRecord& r) {
                       a.Add(r);
                       return true;
                     },
                     [](const BadRow&) { return false; }});
  }
  if (absl::Status s = store.ReportWalk(parts); !s.ok()) return s;
  for (ReportAggregator& a : more) into.Merge(a);
  return absl::OkStatus();
}

// The store walked here: no daemon; with ReportWalk in `parts` parts, or
// with Query (parts 0).
bool FileReport(const std::string& db, int parts, int64_t* records,
                int64_t* page_bytes) {
  Store::Options options;
  options.path = db;
  options.read_only = true;
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(options);
  if (!store.ok()) return false;
  ReportAggregator aggregator;
  RecordFilter all;
  all.without_plans = true;
  const absl::Status read =
      parts > 0 ? WalkInParts(**store, parts, aggregator)
           : (*store)->Query(all, 0, 0, [&](const Record& r) {
               aggregator.Add(r);
               return true;
             });
  if (!read.ok()) return false;
  const ReportData data = aggregator.Finish();
  const std::string html = tuner::RenderReportHtml(
      data, tuner::ReportPage{db, absl::ToUnixMicros(absl::Now()), {}});
  *records = data.records;
  *page_bytes = static_cast<int64_t>(html.size());
  return true;
}

// One way's figures: wall time, and the CPU time of the processes that
// read and aggregated (the daemon; this process; both for the streamed
// path), less sensitive to a shared machine's load.
struct Figures {
  double seconds = 0;
  double cpu_seconds = 0;
  int64_t records = 0;
  int64_t page_bytes = 0;
};

void PrintLine(const char* name, const Figures& f, const Figures& daemon) {
  std::printf("  %-14s %7.2f s (target < %.0f s; %5.2fx the daemon's), "
              "%6.2f s CPU aggregating (%5.2fx), %.3f MB page (target < "
              "%.0f MB)\n",
              name, f.seconds, kTargetS, f.seconds / daemon.seconds,
              f.cpu_seconds, f.cpu_seconds / daemon.cpu_seconds,
              Mb(f.page_bytes), kTargetMb);
}


// `tunedb report` against a real tunedbd on `db`, and then the streamed
// path against the same daemon; the daemon's peak memory around the
// report.
bool DaemonReports(const Flags& f, const std::string& db, Figures* daemon,
                   Figures* streamed, double* rss_before, double* rss_after) {
  bench::Daemon d =
      bench::StartDaemon(f.bin, db, f.work, {"--log-level", "warn"});
  if (d.pid < 0) {
    std::fprintf(stderr, "tunedbd did not start (%s/tunedbd.log)\n",
                 f.work.c_str());
    return false;
  }
  *rss_before = bench::PeakRssMib(d.pid);
  const double cpu_before = CpuSeconds(d.pid);
  const std::string page = f.work + "/report.html";
  Clock::time_point t = Clock::now();
  const int code = bench::Wait(bench::Spawn(
      {f.bin + "/tunedb", "--address", d.address, "report", "-o", page},
      f.work + "/tunedb.out", f.work + "/tunedb.log"));
  daemon->seconds = Seconds(t);
  daemon->page_bytes = FileSize(page);
  daemon->cpu_seconds = CpuSeconds(d.pid) - cpu_before;
  *rss_after = bench::PeakRssMib(d.pid);
  bool ok = code == 0;
  if (!ok) {
    std::fprintf(stderr, "tunedb report exited %d (%s/tunedb.log)\n", code,
                 f.work.c_str());
  } else if (f.streamed) {
    t = Clock::now();
    const double cpu = CpuSeconds(getpid()) + CpuSeconds(d.pid);
    ok = StreamedReport(d.address, &streamed->records, &streamed->page_bytes);
    streamed->seconds = Seconds(t);
    streamed->cpu_seconds = CpuSeconds(getpid()) + CpuSeconds(d.pid) - cpu;
  }
  bench::StopDaemon(d);
  return ok;
}

int Main(int argc, char** argv) {
  Flags f;
  if (!ParseFlags(argc, argv, &f)) {
    std::fprintf(stderr,
                 "usage: report_daemon_bench [--records N] [--bin DIR] "
                 "[--work DIR] [--keep] [--no-streamed]\n");
    return 2;
  }
  if (f.work.empty()) {
    f.work = (std::filesystem::temp_directory_path() /
              absl::StrCat("report_bench_", getpid()))
                 .string();
  }
  std::filesystem::create_directories(f.work);
  const std::string db = f.work + "/tunedb.db";
  Clock::time_point t = Clock::now();
  if (FileSize(db) == 0) {
    if (absl::Status s = MakeDatabase(db, f.records); !s.ok()) {
      std::fprintf(stderr, "making the database: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  std::printf("database of %lld records: %.1f MB, made in %.1f s\n",
              static_cast<long long>(f.records), Mb(FileSize(db)),
              Seconds(t));
  Figures file, one_part, query, daemon, streamed;
  // The daemon's parts: one a hardware thread (and a read connection).
  const int parts =
      static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (Figures* way : {&file, &one_part, &query}) {
    t = Clock::now();
    const double cpu = CpuSeconds(getpid());
    const int way_parts = way == &file ? parts : way == &one_part ? 1 : 0;
    if (!FileReport(db, way_parts, &way->records, &way->page_bytes)) {
      return 1;
    }
    way->seconds = Seconds(t);
    way->cpu_seconds = CpuSeconds(getpid()) - cpu;
  }
  double rss_before = 0, rss_after = 0;
  if (!DaemonReports(f, db, &daemon, &streamed, &rss_before, &rss_after)) {
    return 1;
  }
  std::printf("report of %lld records:\n", static_cast<long long>(f.records));
  PrintLine("daemon", daemon, daemon);
  PrintLine("file", file, daemon);
  PrintLine("file, one part", one_part, daemon);
  PrintLine("query", query, daemon);
  if (f.streamed) PrintLine("streamed", streamed, daemon);
  std::printf("  daemon peak memory: %.0f MB before the report, %.0f MB "
              "after\n",
              rss_before, rss_after);
  if (!f.keep) std::filesystem::remove_all(f.work);
  const bool all = file.records == f.records &&
                   one_part.records == f.records && query.records == f.records &&
                   (!f.streamed || streamed.records == f.records);
  return all ? 0 : 1;
}

}  // namespace
}  // namespace tunedb

int main(int argc, char** argv) { return tunedb::Main(argc, argv); }
