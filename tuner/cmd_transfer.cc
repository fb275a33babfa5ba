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
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"
#include "proto/grpc_status.h"
#include "proto/wire_limits.h"
#include "tuner/commands.h"
#include "tuner/exit_codes.h"
#include "tuner/filter_flags.h"
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

int RunExport(CliContext& ctx, const ExportFlags& f) {
  auto filter = BuildFilter(f.filter, {}, absl::Now());
  if (!filter.ok()) return ctx.Fail(filter.status());
  auto stub = ctx.Stub();
  if (!stub.ok()) return ctx.Fail(stub.status());
  const bool to_stdout = f.output.empty() || f.output == "-";
  // A file is written under a temporary name and renamed when complete, so
  // an interrupted export never leaves a truncated file behind.
  const std::string tmp = f.output + ".part";
  std::ofstream file;
  if (!to_stdout) {
    file.open(tmp, std::ios::trunc);
    if (!file) {
      return ctx.Fail(absl::InvalidArgumentError(
          absl::StrCat("--output: cannot write '", tmp, "'")));
    }
  }
  std::ostream& out = to_stdout ? ctx.out() : file;
  v1::ExportRequest request;
  *request.mutable_filter() = *filter;
  // Without --skip-bad the daemon refuses, before the first line, an export
  // that selects a record it cannot read.
  request.set_skip_bad_rows(f.skip_bad);
  auto context = ctx.NewStreamContext();
  auto reader = (*stub)->Export(context.get(), request);
  v1::ExportLine line;
  int64_t count = 0;
  std::vector<v1::BadRow> skipped;
  while (reader->Read(&line)) {
    if (line.has_skipped()) {
      skipped.push_back(line.skipped());
      continue;
    }
    out << line.json() << "\n";
    ++count;
  }
  absl::Status status = FromGrpcStatus(reader->Finish());
  if (!to_stdout) {
    file.close();
    if (!status.ok() || !file) {
      std::remove(tmp.c_str());
      if (status.ok())
        status = absl::InternalError("writing the export failed");
    } else if (std::rename(tmp.c_str(), f.output.c_str()) != 0) {
      std::remove(tmp.c_str());
      status = absl::InternalError(
          absl::StrCat("cannot rename '", tmp, "' to '", f.output, "'"));
    }
  }
  if (!status.ok()) return ctx.Fail(status);
  ReportSkipped(ctx, skipped);
  if (!to_stdout) {
    if (ctx.json()) {
      ctx.out() << nlohmann::json({{"exported", count},
                                   {"skipped", skipped.size()},
                                   {"file", f.output}})
                       .dump()
                << "\n";
    } else {
      ctx.out() << "exported " << count << " record(s) to " << f.output << "\n";
    }
  } else {
    ctx.err() << "exported " << count << " record(s)\n";
  }
  return skipped.empty() ? kExitOk : kExitPartial;
}

int RunImport(CliContext& ctx, const std::string& path) {
  absl::StatusOr<std::unique_ptr<ImportFile>> opened =
      ImportFile::Open(path, ctx.in());
  if (!opened.ok()) {
    ctx.err() << "tunedb: error: " << opened.status().message() << "\n";
    return kExitBadInput;
  }
  ImportFile& file = **opened;
  // The limits are checked before a line is sent: a file the daemon would
  // refuse is refused at once, not after minutes of streaming.
  absl::StatusOr<ImportFile::Shape> shape = file.Measure();
  if (!shape.ok()) {
    ctx.err() << "tunedb: error: " << shape.status().message() << "\n";
    return kExitBadInput;
  }
  if (shape->lines > kMaxImportLines) {
    ctx.err() << "tunedb: error: " << file.name() << " has " << shape->lines
              << " lines to import; an import takes at most " << kMaxImportLines
              << " (the daemon's limit); split the file (split -l "
              << kMaxImportLines << ") and import each part; nothing was "
              << "imported\n";
    return kExitBadInput;
  }
  if (shape->longest_bytes > kMaxImportLineBytes) {
    ctx.err() << "tunedb: error: " << file.name() << ":" << shape->longest_line
              << " is " << shape->longest_bytes
              << " bytes; an import line may be at most " << kMaxImportLineBytes
              << " bytes (the daemon's 16 MiB message limit); nothing was "
              << "imported\n";
    return kExitBadInput;
  }
  const int64_t total = shape->lines;
  auto stub = ctx.Stub();
  if (!stub.ok()) return ctx.Fail(stub.status());
  auto context = ctx.NewStreamContext();
  v1::ImportResponse response;
  // Ctrl-C breaks the stream off, and the daemon imports nothing of it.
  ScopedSigintHandler sigint(ctx.io().handle_signals);
  auto writer = (*stub)->Import(context.get(), &response);
  ProgressBar bar(ctx.err(), ctx.io().stderr_is_tty, "sending", total);
  if (total < 1000) bar.Silence();
  int64_t sent = 0;
  bool interrupted = false;
  absl::Status read = file.ForEachLine([&](const std::string& json) {
    if (InterruptRequested()) {
      interrupted = true;
      return false;
    }
    v1::ImportLine line;
    line.set_json(json);
    // The count lets the daemon tell a finished stream from a broken one.
    if (sent == 0) line.set_expected_lines(total);
    if (!writer->Write(line)) return false;
    bar.Update(++sent);
    return true;
  });
  if (interrupted || !read.ok()) {
    context->TryCancel();
    writer->Finish();
    bar.Finish();
    if (!read.ok()) {
      ctx.err() << "tunedb: error: " << read.message()
                << "; nothing was imported\n";
      return kExitBadInput;
    }
    ctx.err() << "tunedb: interrupted after sending " << sent << " of " << total
              << " lines; nothing was imported\n";
    return kExitInterrupted;
  }
  writer->WritesDone();
  // The daemon checks the last lines and commits everything in one
  // transaction before it answers: the bar says so rather than sit at 100 %.
  bar.StartWaiting(absl::StrCat("committing ", total, " records"));
  std::future<grpc::Status> finished =
      std::async(std::launch::async, [&writer] { return writer->Finish(); });
  bool told = false;
  while (finished.wait_for(std::chrono::milliseconds(100)) !=
         std::future_status::ready) {
    bar.Update(sent);
    if (InterruptRequested() && !told) {
      // Past the last line the daemon stores all or nothing on its own;
      // breaking off now would leave the outcome unknown.
      ctx.err() << "\ntunedb: the daemon is committing the import (all or "
                   "nothing); waiting for its answer\n";
      told = true;
    }
  }
  absl::Status status = FromGrpcStatus(finished.get());
  bar.Finish();
  if (!status.ok()) return ctx.Fail(status);
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
  CLI::App* imp = app.add_subcommand(
      "import",
      "Import JSON lines written by export: all or nothing; bad lines are "
      "listed with their line numbers");
  imp->add_option("FILE", *path, "File to import ('-' = stdin)")->required();
  imp->callback(
      [&ctx, path, exit_code] { *exit_code = RunImport(ctx, *path); });
}

}  // namespace tunedb::tuner
