// `tunedb export` (records as JSON lines, via the Export rpc; --skip-bad
// leaves out records the database cannot read) and
// `tunedb import FILE` (the Import rpc: all or nothing, rejects by line).
#include <cstdio>
#include <fstream>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"
#include "proto/grpc_status.h"
#include "tuner/commands.h"
#include "tuner/exit_codes.h"
#include "tuner/filter_flags.h"
#include "tuner/interrupt.h"
#include "tuner/progress_bar.h"
#include "tuner/record_stream.h"

namespace tunedb::cli {
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
  std::ifstream file;
  std::istream* in = &ctx.in();
  if (path != "-") {
    file.open(path);
    if (!file) {
      ctx.err() << "tunedb: error: cannot open '" << path << "'\n";
      return kExitBadInput;
    }
    in = &file;
  }
  // Blank lines are not sent; file_line maps the n-th line sent back to
  // its line number in the file for the reject messages.
  std::vector<std::string> lines;
  std::vector<int64_t> file_line;
  std::string raw;
  int64_t number = 0;
  while (std::getline(*in, raw)) {
    ++number;
    if (absl::StripAsciiWhitespace(raw).empty()) continue;
    lines.push_back(raw);
    file_line.push_back(number);
  }
  auto stub = ctx.Stub();
  if (!stub.ok()) return ctx.Fail(stub.status());
  auto context = ctx.NewStreamContext();
  v1::ImportResponse response;
  // Ctrl-C breaks the stream off, and the daemon imports nothing of it.
  ScopedSigintHandler sigint(ctx.io().handle_signals);
  auto writer = (*stub)->Import(context.get(), &response);
  ProgressBar bar(ctx.err(), ctx.io().stderr_is_tty, "importing",
                  static_cast<int64_t>(lines.size()));
  if (lines.size() < 1000) bar.Silence();
  for (size_t i = 0; i < lines.size(); ++i) {
    if (InterruptRequested()) {
      context->TryCancel();
      writer->Finish();
      bar.Finish();
      ctx.err() << "tunedb: interrupted after sending " << i << " of "
                << lines.size() << " lines; nothing was imported\n";
      return kExitInterrupted;
    }
    v1::ImportLine line;
    line.set_json(lines[i]);
    // The count lets the daemon tell a finished stream from a broken one.
    if (i == 0) line.set_expected_lines(static_cast<int64_t>(lines.size()));
    if (!writer->Write(line)) break;
    bar.Update(static_cast<int64_t>(i + 1));
  }
  writer->WritesDone();
  absl::Status status = FromGrpcStatus(writer->Finish());
  bar.Finish();
  if (!status.ok()) return ctx.Fail(status);
  const std::string name = path == "-" ? "<stdin>" : path;
  auto line_of = [&](int64_t sent_line) {
    return sent_line >= 1 && sent_line <= static_cast<int64_t>(file_line.size())
               ? file_line[sent_line - 1]
               : sent_line;
  };
  if (ctx.json()) {
    nlohmann::json rejects = nlohmann::json::array();
    for (const auto& r : response.rejects()) {
      rejects.push_back({{"line", line_of(r.line())}, {"reason", r.reason()}});
    }
    ctx.out() << nlohmann::json({{"file", name},
                                 {"lines", lines.size()},
                                 {"imported", response.imported()},
                                 {"rejects", rejects}})
                     .dump(2)
              << "\n";
  } else {
    for (const auto& r : response.rejects()) {
      ctx.err() << name << ":" << line_of(r.line()) << ": " << r.reason()
                << "\n";
    }
  }
  if (response.rejects_size() > 0) {
    ctx.err() << "tunedb: error: " << response.rejects_size()
              << " bad line(s); nothing was imported (the import is all or "
                 "nothing)\n";
    return kExitBadInput;
  }
  if (!ctx.json()) {
    ctx.out() << "imported " << response.imported() << " record(s) from "
              << name << "\n";
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

}  // namespace tunedb::cli
