// `tunedb export` (records as JSON lines, via the Export rpc; --skip-bad
// leaves out records the database cannot read) and
// `tunedb import FILE` (the Import rpc: all or nothing, rejects by line;
// the file is checked against the wire limits first, then streamed line by
// line, and the daemon's commit is shown as a phase of its own).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "proto/grpc_status.h"
#include "proto/wire_limits.h"
#include "tuner/commands.h"
#include "tuner/exit_codes.h"
#include "tuner/filter_flags.h"
#include "tuner/format.h"
#include "tuner/import_file.h"
#include "tuner/interrupt.h"
#include "tuner/progress_bar.h"
#include "tuner/record_stream.h"

namespace tunedb::tuner {
namespace {

struct ExportFlags {
  FilterFlags filter;
  std::string output;  // "" or "-" = stdout
  bool skip_bad = false;
};

// What an export wrote: the lines, and the rows it skipped (--skip-bad).
struct ExportResult {
  int64_t count = 0;
  std::vector<v1::BadRow> skipped;
};

// Streams the export of `filter` as JSON lines to `out`. Without
// --skip-bad the daemon refuses, before the first line, an export that
// selects a record it cannot read.
absl::StatusOr<ExportResult> StreamExport(CliContext& ctx,
                                          const v1::Filter& filter,
                                          bool skip_bad, std::ostream& out) {
  ASSIGN_OR_RETURN(v1::TuneDb::Stub * stub, ctx.Stub());
  v1::ExportRequest request;
  *request.mutable_filter() = filter;
  request.set_skip_bad_rows(skip_bad);
  auto context = ctx.NewStreamContext();
  auto reader = stub->Export(context.get(), request);
  ExportResult result;
  v1::ExportLine line;
  while (reader->Read(&line)) {
    if (line.has_skipped()) {
      result.skipped.push_back(line.skipped());
      continue;
    }
    out << line.json() << "\n";
    ++result.count;
  }
  RETURN_IF_ERROR(FromGrpcStatus(reader->Finish()));
  return result;
}

// The export into `path`, written under a temporary name and renamed when
// complete, so an interrupted or failed export never leaves a truncated
// file behind.
absl::StatusOr<ExportResult> ExportToFile(CliContext& ctx,
                                          const v1::Filter& filter,
                                          bool skip_bad,
                                          const std::string& path) {
  const std::string tmp = path + ".part";
  std::ofstream file(tmp, std::ios::trunc);
  if (!file) {
    return absl::InvalidArgumentError(
        absl::StrCat("--output: cannot write '", tmp, "'"));
  }
  absl::StatusOr<ExportResult> result =
      StreamExport(ctx, filter, skip_bad, file);
  file.close();
  if (result.ok() && !file) {
    result = absl::InternalError("writing the export failed");
  }
  if (result.ok() && std::rename(tmp.c_str(), path.c_str()) != 0) {
    result = absl::InternalError(
        absl::StrCat("cannot rename '", tmp, "' to '", path, "'"));
  }
  if (!result.ok()) std::remove(tmp.c_str());
  return result;
}

int RunExport(CliContext& ctx, const ExportFlags& f) {
  auto filter = BuildFilter(f.filter, {}, absl::Now());
  if (!filter.ok()) return ctx.Fail(filter.status());
  const bool to_stdout = f.output.empty() || f.output == "-";
  absl::StatusOr<ExportResult> result =
      to_stdout ? StreamExport(ctx, *filter, f.skip_bad, ctx.out())
                : ExportToFile(ctx, *filter, f.skip_bad, f.output);
  if (!result.ok()) return ctx.Fail(result.status());
  ReportSkipped(ctx, result->skipped);
  if (to_stdout) {
    ctx.err() << "exported " << result->count << " record(s)\n";
  } else if (ctx.json()) {
    ctx.out() << nlohmann::json({{"exported", result->count},
                                 {"skipped", result->skipped.size()},
                                 {"file", f.output}})
                     .dump()
              << "\n";
  } else {
    ctx.out() << "exported " << result->count << " record(s) to " << f.output
              << "\n";
  }
  return result->skipped.empty() ? kExitOk : kExitPartial;
}

// The file's shape, checked against the wire limits before a line is sent:
// a file the daemon would refuse is refused at once, not after minutes of
// streaming. Its line count, or INVALID_ARGUMENT saying what is over.
absl::StatusOr<int64_t> CheckImportFile(ImportFile& file) {
  absl::StatusOr<ImportFile::Shape> shape = file.Measure();
  if (!shape.ok()) return shape.status();
  if (shape->lines > kMaxImportLines) {
    return absl::InvalidArgumentError(absl::StrCat(
        file.name(), " has ", shape->lines,
        " lines to import; an import takes at most ", kMaxImportLines,
        " (the daemon's limit); split the file (split -l ", kMaxImportLines,
        ") and import each part; nothing was imported"));
  }
  if (shape->longest_bytes > kMaxImportLineBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        file.name(), ":", shape->longest_line, " is ", shape->longest_bytes,
        " bytes; an import line may be at most ", kMaxImportLineBytes,
        " bytes (the daemon's 16 MiB message limit); nothing was imported"));
  }
  return shape->lines;
}

// A status that may mean the stream broke without the daemon's answer (the
// daemon went away, or the connection did), rather than an answer.
bool IsBrokenStream(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsCancelled(status) ||
         absl::IsUnknown(status) || absl::IsDeadlineExceeded(status);
}

// The daemon's refusal of an import past its limit of imports at once
// (SqliteStore::BeginImport: "N imports are running already"): an answer,
// not a broken stream.
bool IsImportLimit(const absl::Status& status) {
  return (absl::IsUnavailable(status) || absl::IsResourceExhausted(status)) &&
         absl::StrContains(status.message(), "imports are running already");
}

// A fresh name for an import: 16 random hex digits after "import-".
std::string NewImportId() {
  std::random_device random;
  const uint64_t bits =
      (static_cast<uint64_t>(random()) << 32) ^ static_cast<uint64_t>(random());
  return absl::StrCat("import-", absl::Hex(bits, absl::kZeroPad16));
}

// How one import stream ended, as the CLI saw it.
struct ImportSend {
  int64_t sent = 0;
  bool all_sent = false;     // every line written and the stream closed
  bool interrupted = false;  // Ctrl-C before the last line
  absl::Status read;         // the file could not be read
  absl::Status status;       // the daemon's answer (or the broken stream's)
  v1::ImportResponse response;
};

// Waits for the daemon's answer after the last line: it checks the last
// lines and commits everything in one transaction first, so the bar says
// so rather than sit at 100 %.
grpc::Status AwaitCommit(CliContext& ctx, ProgressBar& bar, int64_t total,
                         grpc::ClientWriter<v1::ImportLine>& writer) {
  bar.StartWaiting(absl::StrCat("committing ", total, " records"));
  std::future<grpc::Status> finished =
      std::async(std::launch::async, [&writer] { return writer.Finish(); });
  bool told = false;
  while (finished.wait_for(std::chrono::milliseconds(100)) !=
         std::future_status::ready) {
    bar.Update(total);
    if (InterruptRequested() && !told) {
      // Past the last line the daemon stores all or nothing on its own;
      // breaking off now would leave the outcome unknown.
      ctx.err() << "\ntunedb: the daemon is committing the import (all or "
                   "nothing); waiting for its answer\n";
      told = true;
    }
  }
  return finished.get();
}

// Streams `file` as the import `import_id`. The first line carries the
// count, so the daemon tells a finished stream from a broken one.
ImportSend SendImport(CliContext& ctx, v1::TuneDb::Stub& stub,
                      ImportFile& file, int64_t total,
                      const std::string& import_id) {
  ImportSend out;
  auto context = ctx.NewStreamContext();
  // Ctrl-C breaks the stream off, and the daemon imports nothing of it.
  ScopedSigintHandler sigint(ctx.io().handle_signals);
  auto writer = stub.Import(context.get(), &out.response);
  ProgressBar bar(ctx.err(), ctx.io().stderr_is_tty, "sending", total);
  if (total < 1000) bar.Silence();
  bool broken = false;
  out.read = file.ForEachLine([&](const std::string& json) {
    if (InterruptRequested()) {
      out.interrupted = true;
      return false;
    }
    v1::ImportLine line;
    line.set_json(json);
    if (out.sent == 0) {
      line.set_expected_lines(total);
      line.set_import_id(import_id);
    }
    broken = !writer->Write(line);
    if (broken) return false;
    bar.Update(++out.sent);
    return true;
  });
  if (out.interrupted || !out.read.ok()) context->TryCancel();
  out.all_sent = !broken && !out.interrupted && out.read.ok() &&
                 out.sent == total && writer->WritesDone();
  out.status = FromGrpcStatus(out.all_sent
                                  ? AwaitCommit(ctx, bar, total, *writer)
                                  : writer->Finish());
  bar.Finish();
  return out;
}

// After a stream that broke once every line was sent: asks the daemon
// whether the import committed (it may have, and died before answering).
// Waits up to kImportStatusWaitS for a daemon that is coming back.
absl::StatusOr<v1::ImportStatusResponse> AskImportStatus(
    v1::TuneDb::Stub& stub, const std::string& import_id) {
  constexpr int kImportStatusWaitS = 5;
  grpc::ClientContext context;
  context.set_wait_for_ready(true);
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(kImportStatusWaitS));
  v1::ImportStatusRequest request;
  request.set_import_id(import_id);
  v1::ImportStatusResponse response;
  RETURN_IF_ERROR(
      FromGrpcStatus(stub.ImportStatus(&context, request, &response)));
  return response;
}

// The outcome of a stream that did not end with the daemon's answer.
int ReportBrokenImport(CliContext& ctx, v1::TuneDb::Stub& stub,
                       const ImportSend& send, int64_t total,
                       const std::string& import_id) {
  if (!send.all_sent) {
    // A stream short of its announced count is never committed.
    ctx.err() << "tunedb: error: the import stream broke after " << send.sent
              << " of " << total << " lines were sent ("
              << send.status.message() << "); nothing was imported\n";
    return ExitCodeFor(send.status);
  }
  absl::StatusOr<v1::ImportStatusResponse> asked =
      AskImportStatus(stub, import_id);
  if (asked.ok() && asked->committed()) {
    ctx.err() << "tunedb: the daemon's answer was lost ("
              << send.status.message() << "), but the import committed\n";
    ctx.out() << "imported " << asked->imported() << " record(s) as "
              << import_id << "\n";
    return kExitOk;
  }
  if (asked.ok()) {
    ctx.err() << "tunedb: error: all " << total << " lines were sent, but the "
              << "import did not commit (" << send.status.message()
              << "); nothing was imported\n";
    return ExitCodeFor(send.status);
  }
  ctx.err() << "tunedb: error: all " << total << " lines were sent, then the "
            << "daemon went away (" << send.status.message()
            << "); whether the import committed is unknown until it is back: "
            << "`tunedb import --status " << import_id << "` tells\n";
  return kExitUnreachable;
}

// Lists the rejected lines by their line in the file; kExitBadInput if any.
int ReportImport(CliContext& ctx, ImportFile& file, int64_t total,
                 const v1::ImportResponse& response) {
  std::vector<int64_t> reject_lines;
  for (const auto& r : response.rejects()) reject_lines.push_back(r.line());
  absl::StatusOr<std::map<int64_t, int64_t>> file_lines =
      file.FileLines(reject_lines);
  auto line_of = [&](int64_t sent_line) {
    if (!file_lines.ok()) return sent_line;
    auto it = file_lines->find(sent_line);
    return it == file_lines->end() ? sent_line : it->second;
  };
  const int64_t rejected =
      std::max<int64_t>(response.rejected(), response.rejects_size());
  if (ctx.json()) {
    nlohmann::json rejects = nlohmann::json::array();
    for (const auto& r : response.rejects()) {
      rejects.push_back({{"line", line_of(r.line())}, {"reason", r.reason()}});
    }
    ctx.out() << nlohmann::json({{"file", file.name()},
                                 {"lines", total},
                                 {"imported", response.imported()},
                                 {"rejected", rejected},
                                 {"rejects", rejects}})
                     .dump(2)
              << "\n";
  } else {
    for (const auto& r : response.rejects()) {
      ctx.err() << file.name() << ":" << line_of(r.line()) << ": " << r.reason()
                << "\n";
    }
    if (rejected > response.rejects_size()) {
      ctx.err() << file.name() << ": ... and "
                << rejected - response.rejects_size() << " more bad line(s)\n";
    }
  }
  if (rejected > 0) {
    ctx.err() << "tunedb: error: " << rejected
              << " bad line(s); nothing was imported (the import is all or "
                 "nothing)\n";
    return kExitBadInput;
  }
  if (!ctx.json()) {
    ctx.out() << "imported " << response.imported() << " record(s) from "
              << file.name() << "\n";
  }
  return kExitOk;
}

int RunImport(CliContext& ctx, const std::string& path) {
  absl::StatusOr<std::unique_ptr<ImportFile>> opened =
      ImportFile::Open(path, ctx.in());
  absl::StatusOr<int64_t> total =
      opened.ok() ? CheckImportFile(**opened) : opened.status();
  if (!total.ok()) {
    ctx.err() << "tunedb: error: " << total.status().message() << "\n";
    return kExitBadInput;
  }
  ImportFile& file = **opened;
  auto stub = ctx.Stub();
  if (!stub.ok()) return ctx.Fail(stub.status());
  const std::string import_id = NewImportId();
  ImportSend send = SendImport(ctx, **stub, file, *total, import_id);
  if (!send.read.ok()) {
    ctx.err() << "tunedb: error: " << send.read.message()
              << "; nothing was imported\n";
    return kExitBadInput;
  }
  if (send.interrupted) {
    ctx.err() << "tunedb: interrupted after sending " << send.sent << " of "
              << *total << " lines; nothing was imported\n";
    return kExitInterrupted;
  }
  if (IsImportLimit(send.status)) {
    ctx.err() << "tunedb: error: the daemon refused the import: "
              << send.status.message()
              << " (the daemon's limit of imports at once); nothing was "
                 "imported\n";
    return kExitError;
  }
  if (IsBrokenStream(send.status)) {
    return ReportBrokenImport(ctx, **stub, send, *total, import_id);
  }
  if (!send.status.ok()) return ctx.Fail(send.status);
  return ReportImport(ctx, file, *total, send.response);
}

// `tunedb import --status ID`: whether the import of that name committed.
int RunImportStatus(CliContext& ctx, const std::string& import_id) {
  v1::ImportStatusRequest request;
  request.set_import_id(import_id);
  absl::StatusOr<v1::ImportStatusResponse> asked =
      ctx.Call(&v1::TuneDb::Stub::ImportStatus, request);
  if (!asked.ok()) return ctx.Fail(asked.status());
  const v1::ImportStatusResponse& response = *asked;
  if (ctx.json()) {
    ctx.out() << nlohmann::json({{"import_id", import_id},
                                 {"committed", response.committed()},
                                 {"imported", response.imported()},
                                 {"lines", response.lines()},
                                 {"committed_at_us",
                                  response.committed_at_us()}})
                     .dump()
              << "\n";
  } else if (response.committed()) {
    ctx.out() << import_id << " committed: " << response.imported()
              << " record(s) from " << response.lines() << " line(s) at "
              << FormatTime(response.committed_at_us()) << "\n";
  } else {
    ctx.out() << import_id << " did not commit: nothing of it is stored\n";
  }
  return response.committed() ? kExitOk : kExitNotFound;
}

}  // namespace

void AddTransferCommands(CLI::App& app, CliContext& ctx, int* exit_code) {
  auto ef = std::make_shared<ExportFlags>();
  CLI::App* exp = app.add_subcommand(
      "export", "Write stored records as JSON lines (to a file or stdout)");
  AddFilterFlags(exp, &ef->filter);
  exp->add_option("-o,--output", ef->output,
                  "Output file ('-' or none = stdout)");
  exp->add_flag("--skip-bad", ef->skip_bad,
                "Skip records the database cannot read (listed on stderr, "
                "exit code 5) instead of failing with nothing written");
  exp->callback([&ctx, ef, exit_code] { *exit_code = RunExport(ctx, *ef); });

  auto path = std::make_shared<std::string>();
  auto status_id = std::make_shared<std::string>();
  CLI::App* imp = app.add_subcommand(
      "import",
      "Import JSON lines written by export: all or nothing; bad lines are "
      "listed with their line numbers");
  CLI::Option* file =
      imp->add_option("FILE", *path, "File to import ('-' = stdin)");
  imp->add_option("--status", *status_id,
                  "Instead of importing: whether the import of this name "
                  "(printed when its answer was lost) committed; exit 6 if "
                  "it did not")
      ->excludes(file);
  imp->callback([&ctx, path, status_id, exit_code] {
    if (!status_id->empty()) {
      *exit_code = RunImportStatus(ctx, *status_id);
    } else if (path->empty()) {
      ctx.err() << "tunedb: error: import: FILE is required\n";
      *exit_code = kExitUsage;
    } else {
      *exit_code = RunImport(ctx, *path);
    }
  });
}

}  // namespace tunedb::tuner
