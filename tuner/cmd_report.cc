// `tunedb report -o FILE`: one self-contained HTML page about the daemon's
// database (ReportData, RenderReportHtml).
#include <fstream>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "proto/convert.h"
#include "tuner/commands.h"
#include "tuner/exit_codes.h"
#include "tuner/format.h"
#include "tuner/problem_plan.h"
#include "tuner/record_stream.h"
#include "tuner/report_data.h"
#include "tuner/report_html.h"

namespace tunedb::tuner {
namespace {

struct ReportFlags {
  std::string out;
  ProblemFlags problems;  // optional: the models coverage is measured on
};

// Every readable record into `aggregator`; the unreadable ones into
// `skipped`.
absl::Status AggregateRecords(CliContext& ctx, ReportAggregator& aggregator,
                              std::vector<v1::BadRow>* skipped) {
  return ForEachParsedRecord(
      ctx, v1::Filter(), 0,
      [&](Record r) {
        aggregator.Add(r);
        return true;
      },
      skipped);
}

std::optional<DaemonCounters> Counters(CliContext& ctx) {
  auto stats = ctx.Call(&v1::TuneDb::Stub::Stats, v1::StatsRequest());
  if (!stats.ok()) return std::nullopt;
  return DaemonCounters{stats->hits(), stats->misses(), stats->predictions(),
                        stats->uptime_s()};
}

int RunReport(CliContext& ctx, const ReportFlags& f) {
  ReportAggregator aggregator;
  if (!f.problems.empty()) {
    ProblemPlan plan;
    if (int code = BuildProblemPlan(ctx, f.problems, DeviceKey(), &plan);
        code != kExitOk) {
      return code;
    }
    std::vector<ConvProblem> problems;
    for (const PrewarmItem& item : plan.items) {
      problems.push_back(item.key.problem);
    }
    aggregator.SetPlannedProblems(f.problems.models, problems);
  }
  const absl::Time start = absl::Now();
  std::vector<v1::BadRow> skipped;
  if (absl::Status s = AggregateRecords(ctx, aggregator, &skipped); !s.ok()) {
    return ctx.Fail(s);
  }
  ReportSkipped(ctx, skipped);
  const ReportData data = aggregator.Finish();
  ReportPage page{ctx.options().address, absl::ToUnixMicros(absl::Now()),
                  Counters(ctx)};
  const std::string html = RenderReportHtml(data, page);
  std::ofstream file(f.out, std::ios::binary | std::ios::trunc);
  file << html;
  file.close();
  if (!file) {
    return ctx.Fail(absl::PermissionDeniedError(
        absl::StrCat("cannot write '", f.out, "'")));
  }
  ctx.err() << "wrote " << f.out << ": " << data.records << " records, "
            << FormatBytes(static_cast<int64_t>(html.size()))
            << absl::StrFormat(", in %.2f s\n",
                               absl::ToDoubleSeconds(absl::Now() - start));
  return skipped.empty() ? kExitOk : kExitPartial;
}

}  // namespace

void AddReportCommand(CLI::App& app, CliContext& ctx, int* exit_code) {
  auto flags = std::make_shared<ReportFlags>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Write one self-contained HTML page about the database: records and "
      "coverage per device, time saved, choices against cuDNN's heuristic, "
      "revalidations, workspaces");
  cmd->add_option("-o,--out", flags->out, "The HTML file to write")
      ->required();
  AddPlanFlags(cmd, &flags->problems);
  cmd->callback(
      [&ctx, flags, exit_code] { *exit_code = RunReport(ctx, *flags); });
}

}  // namespace tunedb::tuner
