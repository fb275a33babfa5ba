// `tunedb report -o FILE`: one self-contained HTML page about the daemon's
// database: the daemon aggregates its records (the Report rpc, ReportData)
// and the page is rendered here (RenderReportHtml); from a daemon older than
// that rpc, its records are streamed and aggregated here. With --fleet the
// daemon aggregates every host's records in its fleet database instead;
// with --json the aggregate goes to stdout as the rpc's JSON.
#include <fstream>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/report_data.h"
#include "common/report_json.h"
#include "common/status_macros.h"
#include "proto/convert.h"
#include "proto/wire_limits.h"
#include "tuner/commands.h"
#include "tuner/exit_codes.h"
#include "tuner/format.h"
#include "tuner/problem_plan.h"
#include "tuner/record_stream.h"
#include "tuner/report_html.h"

namespace tunedb::tuner {
namespace {

struct ReportFlags {
  std::string out;
  ProblemFlags problems;  // optional: the models coverage is measured on
  bool fleet = false;     // every host's records in the fleet database
};

// The daemon's aggregate (the Report rpc); UNIMPLEMENTED from a daemon
// older than it.
absl::StatusOr<ReportData> AskReport(CliContext& ctx,
                                     const std::vector<ConvProblem>& planned,
                                     bool fleet) {
  v1::ReportRequest request;
  request.set_fleet(fleet);
  for (const ConvProblem& p : planned) request.add_planned_problems(p.ToText());
  if (request.ByteSizeLong() > static_cast<size_t>(kDaemonMaxReceiveBytes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the ", planned.size(), " problems of the report take ",
        FormatBytes(static_cast<int64_t>(request.ByteSizeLong())),
        ", over the daemon's message limit of ",
        FormatBytes(kDaemonMaxReceiveBytes), "; ask for fewer problems"));
  }
  // The daemon reads every record: longer than one lookup, no deadline.
  ASSIGN_OR_RETURN(v1::ReportResponse response,
                   ctx.Call(&v1::TuneDb::Stub::Report, request,
                            CliContext::Deadline::kNone));
  absl::StatusOr<ReportData> data = ReportDataFromJson(response.report_json());
  if (!data.ok()) {
    return absl::InternalError(absl::StrCat(
        "the daemon's report cannot be read: ", data.status().message()));
  }
  return data;
}

// An older daemon's records, streamed through Query and aggregated here.
absl::StatusOr<ReportData> AggregateStreamed(
    CliContext& ctx, const std::vector<ConvProblem>& planned) {
  ReportAggregator aggregator;
  if (!planned.empty()) aggregator.SetPlannedProblems({}, planned);
  std::vector<v1::BadRow> skipped;
  RETURN_IF_ERROR(ForEachParsedRecord(
      ctx, v1::Filter(), 0,
      [&](Record r) {
        aggregator.Add(r);
        return true;
      },
      &skipped));
  for (const v1::BadRow& bad : skipped) {
    aggregator.AddUnreadable({bad.id(), bad.key_text(), bad.reason()});
  }
  return aggregator.Finish();
}

// The aggregate: the daemon's, or, from a daemon that has no Report rpc,
// its records aggregated here (saying so). A fleet's is the daemon's only.
absl::StatusOr<ReportData> Aggregate(CliContext& ctx,
                                     const std::vector<ConvProblem>& planned,
                                     bool fleet) {
  absl::StatusOr<ReportData> data = AskReport(ctx, planned, fleet);
  // A daemon older than the Report rpc does not know it at all; one older
  // than the fleet flag ignores it and sends its own store's report.
  if (fleet && (absl::IsUnimplemented(data.status()) ||
                (data.ok() && data->fleet.empty()))) {
    return absl::FailedPreconditionError(
        "the daemon is older than the fleet's report; ask a newer one");
  }
  if (!absl::IsUnimplemented(data.status())) return data;
  ctx.err() << "tunedb: the daemon is older than the Report rpc: reading "
               "its records one by one here (slower)\n";
  return AggregateStreamed(ctx, planned);
}

// The rows the report skipped, as query and export tell of them.
void ReportUnreadable(CliContext& ctx, const ReportData& data) {
  std::vector<v1::BadRow> skipped;
  for (const UnreadableRow& row : data.unreadable_rows) {
    v1::BadRow& bad = skipped.emplace_back();
    bad.set_id(row.id);
    bad.set_key_text(row.key_text);
    bad.set_reason(row.reason);
  }
  ReportSkipped(ctx, skipped);
  if (data.unreadable > static_cast<int64_t>(skipped.size())) {
    ctx.err() << "tunedb: " << data.unreadable
              << " unreadable record(s) in all, the first " << skipped.size()
              << " listed\n";
  }
}

std::optional<DaemonCounters> Counters(CliContext& ctx) {
  auto stats = ctx.Call(&v1::TuneDb::Stub::Stats, v1::StatsRequest());
  if (!stats.ok()) return std::nullopt;
  return DaemonCounters{stats->hits(), stats->misses(), stats->predictions(),
                        stats->uptime_s()};
}

// The problems of the report's models and files, device-free.
int PlannedProblems(CliContext& ctx, const ReportFlags& f,
                    std::vector<ConvProblem>* problems) {
  if (f.problems.empty()) return kExitOk;
  ProblemPlan plan;
  if (int code = BuildProblemPlan(ctx, f.problems, DeviceKey(), &plan);
      code != kExitOk) {
    return code;
  }
  for (const PrewarmItem& item : plan.items) {
    problems->push_back(item.key.problem);
  }
  return kExitOk;
}

// The page written to f.out; its size.
absl::StatusOr<size_t> WritePage(CliContext& ctx, const ReportFlags& f,
                                 const ReportData& data) {
  ReportPage page{ctx.options().address, absl::ToUnixMicros(absl::Now()),
                  Counters(ctx)};
  const std::string html = RenderReportHtml(data, page);
  std::ofstream file(f.out, std::ios::binary | std::ios::trunc);
  file << html;
  file.close();
  if (!file) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write '", f.out, "'"));
  }
  return html.size();
}

int RunReport(CliContext& ctx, const ReportFlags& f) {
  if (f.out.empty() && !ctx.json()) {
    return ctx.Fail(absl::InvalidArgumentError(
        "report: name the page with -o FILE, or ask for --json"));
  }
  std::vector<ConvProblem> planned;
  if (int code = PlannedProblems(ctx, f, &planned); code != kExitOk) {
    return code;
  }
  const absl::Time start = absl::Now();
  absl::StatusOr<ReportData> data = Aggregate(ctx, planned, f.fleet);
  if (!data.ok()) return ctx.Fail(data.status());
  data->models = f.problems.models;
  ReportUnreadable(ctx, *data);
  if (ctx.json()) ctx.out() << ReportDataToJson(*data) << "\n";
  if (!f.out.empty()) {
    absl::StatusOr<size_t> size = WritePage(ctx, f, *data);
    if (!size.ok()) return ctx.Fail(size.status());
    ctx.err() << "wrote " << f.out << ": " << data->records << " records"
              << (f.fleet ? absl::StrCat(" of ", data->hosts.size(), " hosts")
                          : "")
              << ", " << FormatBytes(static_cast<int64_t>(*size))
              << absl::StrFormat(", in %.2f s\n",
                                 absl::ToDoubleSeconds(absl::Now() - start));
  }
  return data->unreadable == 0 ? kExitOk : kExitPartial;
}

}  // namespace

void AddReportCommand(CLI::App& app, CliContext& ctx, int* exit_code) {
  auto flags = std::make_shared<ReportFlags>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Write one self-contained HTML page about the database: records and "
      "coverage per device, time saved, choices against cuDNN's heuristic, "
      "revalidations, workspaces (--json: the aggregate on stdout)");
  cmd->add_option("-o,--out", flags->out,
                  "The HTML file to write (required without --json)");
  cmd->add_flag("--fleet", flags->fleet,
                "Every host's records in the daemon's fleet database "
                "(PostgreSQL) instead of the daemon's own store; the page "
                "names the fleet and its hosts. Answers served are counted "
                "by each daemon in its own store, so they are 0 here");
  AddPlanFlags(cmd, &flags->problems);
  cmd->callback(
      [&ctx, flags, exit_code] { *exit_code = RunReport(ctx, *flags); });
}

}  // namespace tunedb::tuner
