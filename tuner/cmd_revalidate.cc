// `tunedb revalidate --from VERSION [--to VERSION] [--model NAME...]
// [filters]`:
// makes the new cuDNN version's records for the problems stored under an
// older one by re-timing their old choices (docs/revalidation.md), through
// the daemon's TuneBatch with revalidate_from_cudnn, with a progress bar,
// and summarises what stood: keys kept, choices changed (with the speed
// change), full searches needed, and the time spent. Records of the old
// version are only read. Keys already stored for the new version are
// skipped, so an interrupted run resumes where it stopped. --model keeps the
// problems that are layers of built-in models (ModelMatcher). --fleet
// queues the keys as fleet revalidation jobs instead (fleet_prewarm.h).
//
// `tunedb revalidate --driver [--from-driver VERSION] [--model NAME...]
// [filters]`: after a driver upgrade, re-times the records stored under
// the device's own key that were measured under an older driver
// (TuneRequest.revalidate_older_driver); each re-timed record replaces the
// old driver's record of its key. A key done carries the new driver, so an
// interrupted run resumes where it stopped.
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/driver_version.h"
#include "common/status_macros.h"
#include "proto/convert.h"
#include "tuner/choice_diff.h"
#include "tuner/commands.h"
#include "tuner/exit_codes.h"
#include "tuner/filter_flags.h"
#include "tuner/fleet_prewarm.h"
#include "tuner/interrupt.h"
#include "tuner/model_matcher.h"
#include "tuner/prewarm_runner.h"
#include "tuner/record_stream.h"
#include "tuner/render.h"
#include "tuner/revalidate_report.h"

namespace tunedb::tuner {
namespace {

struct RevalidateFlags {
  std::string from, to;
  bool driver = false;      // --driver: after a driver upgrade
  std::string from_driver;  // --from-driver: that driver's records only
  FilterFlags filter;  // its --gpu also picks the device
  std::vector<std::string> models;  // --model: built-in models' layers only
  std::string input;                 // --input: their input size
  int64_t limit = 0;
  int window = 8;
  bool no_progress = false;
  FleetPrewarmFlags fleet;  // --fleet: the keys become fleet jobs
};

// The new version's device: --to's version (else any other than --from's)
// of the GPU --gpu names.
absl::StatusOr<DeviceKey> TargetDevice(CliContext& ctx,
                                       const RevalidateFlags& f, int from) {
  std::optional<int> to;
  if (!f.to.empty()) {
    absl::StatusOr<int> parsed = ParseCudnnVersionFlag(f.to);
    if (!parsed.ok()) return parsed.status();
    if (*parsed == from) {
      return absl::InvalidArgumentError("--to: the same version as --from");
    }
    to = *parsed;
  }
  absl::StatusOr<DeviceKey> device =
      ctx.ResolveDevice(f.filter.gpu, nullptr, [&](const DeviceKey& d) {
        return to ? d.cudnn_version == *to : d.cudnn_version != from;
      });
  if (device.ok() || !absl::IsInvalidArgument(device.status())) return device;
  // Name what matched nothing: the version, and --gpu only where given.
  return absl::InvalidArgumentError(absl::StrCat(
      "no GPU of the daemon",
      f.filter.gpu.empty() ? ""
                           : absl::StrCat(" that --gpu '", f.filter.gpu,
                                          "' names"),
      " serves the cuDNN version asked for: ",
      to ? absl::StrCat("cuDNN ", CudnnVersionText(*to), " (--to)")
         : absl::StrCat("one other than cuDNN ", CudnnVersionText(from),
                        " (--from)"),
      "; see `tunedb devices`"));
}

// --fleet: every daemon serving the new version's device runs the keys as
// revalidation jobs, each from the old record in its store or the fleet's.
// What each job kept or changed is in its host's records (`tunedb diff`).
int RevalidateOnFleet(CliContext& ctx, const RevalidateFlags& f,
                      const std::vector<PrewarmItem>& items, int from) {
  return RunFleetItems(ctx, f.fleet, !f.no_progress, items, f.limit, from);
}

// `records` without the problems that are not layers of --model's models.
void KeepModelLayers(const ModelMatcher& models, std::vector<Record>& records) {
  if (models.empty()) return;
  records.erase(std::remove_if(records.begin(), records.end(),
                               [&](const Record& r) {
                                 return !models.Matches(r.key.problem);
                               }),
                records.end());
}

// The records of `device`'s GPU model that `f`'s filters and `extra`
// select, without those --model leaves out.
absl::StatusOr<std::vector<Record>> SourceRecords(
    CliContext& ctx, const RevalidateFlags& f, const DeviceKey& device,
    const std::vector<std::string>& extra) {
  ASSIGN_OR_RETURN(ModelMatcher models,
                   ModelMatcher::Create(f.models, f.input));
  FilterFlags old_records = f.filter;
  old_records.gpu = device.gpu_model;  // --gpu may be an ordinal or a part
  ASSIGN_OR_RETURN(v1::Filter filter,
                   BuildFilter(old_records, extra, absl::Now()));
  ASSIGN_OR_RETURN(std::vector<Record> records, RecordsMatching(ctx, filter));
  KeepModelLayers(models, records);
  return records;
}

// Sends `items` (made from `sources`, one each) through TuneBatch with
// `options`, classifies the answers into `report` and renders it; the exit
// code.
int SendAndReport(CliContext& ctx, const std::vector<PrewarmItem>& items,
                  const std::vector<const Record*>& sources,
                  PrewarmOptions options, absl::Time start,
                  RevalidateReport& report) {
  absl::Status bad_answer;
  options.on_answer = [&](size_t i, const v1::TuneResponse& answer) {
    if (!answer.searched()) return;
    absl::StatusOr<Record> fresh = FromProto(answer.record());
    if (!fresh.ok()) {
      bad_answer = fresh.status();
      return;
    }
    report.Classify(*sources[i], *fresh);
  };
  ScopedSigintHandler sigint(ctx.io().handle_signals);
  absl::StatusOr<PrewarmSummary> run = RunPrewarm(ctx, items, options);
  if (!run.ok()) return ctx.Fail(run.status());
  if (!bad_answer.ok()) return ctx.Fail(bad_answer);
  report.run = *std::move(run);
  report.Tally();
  report.wall_s = absl::ToDoubleSeconds(absl::Now() - start);
  Render(ctx, FormOf(ctx), report,
         Renderer<RevalidateReport>{ReportToJson, PrintReport});
  if (!report.run.stream_status.ok()) {
    return ctx.Fail(report.run.stream_status);
  }
  if (report.run.interrupted) {
    ctx.err() << "interrupted: rerun the same command to resume (keys "
                 "already revalidated are skipped)\n";
    return kExitInterrupted;
  }
  return report.run.failed > 0 ? kExitPartial : kExitOk;
}

PrewarmOptions SendOptions(const RevalidateFlags& f) {
  PrewarmOptions options;
  options.limit = f.limit;
  options.window = std::max(1, f.window);
  options.progress = !f.no_progress;
  return options;
}

int RunRevalidate(CliContext& ctx, const RevalidateFlags& f) {
  const absl::Time start = absl::Now();
  absl::StatusOr<int> from = ParseCudnnVersionFlag(f.from);
  if (!from.ok()) return ctx.Fail(from.status());
  absl::StatusOr<ModelMatcher> models = ModelMatcher::Create(f.models, f.input);
  if (!models.ok()) return ctx.Fail(models.status());
  absl::StatusOr<DeviceKey> to = TargetDevice(ctx, f, *from);
  if (!to.ok()) return ctx.Fail(to.status());
  absl::StatusOr<std::vector<Record>> old = SourceRecords(
      ctx, f, *to, {absl::StrCat("cudnn=", CudnnVersionText(*from))});
  if (!old.ok()) return ctx.Fail(old.status());

  RevalidateReport report;
  report.from_cudnn = *from;
  report.to = *to;
  report.old_records = static_cast<int64_t>(old->size());
  // One item per problem (several CUDA runtimes of the old version may
  // have one), for the new version's device.
  std::vector<PrewarmItem> items;
  std::vector<const Record*> source_of;
  std::map<std::string, size_t> seen;
  for (const Record& r : *old) {
    ProblemKey key{*to, r.key.problem};
    if (!seen.emplace(key.ToText(), items.size()).second) continue;
    items.push_back({key, r.key.HashText()});
    source_of.push_back(&r);
  }
  ctx.err() << items.size() << " problems stored for cuDNN "
            << CudnnVersionText(*from) << " to revalidate for "
            << to->gpu_model << ", cuDNN "
            << CudnnVersionText(to->cudnn_version) << "\n";
  if (!f.fleet.url.empty()) return RevalidateOnFleet(ctx, f, items, *from);
  PrewarmOptions options = SendOptions(f);
  options.revalidate_from_cudnn = *from;
  return SendAndReport(ctx, items, source_of, options, start, report);
}

// --from-driver's version: INVALID_ARGUMENT where it cannot be read or is
// not older than the device's `serving` driver.
absl::Status CheckFromDriver(const std::string& text,
                             const DriverVersion& serving) {
  absl::StatusOr<DriverVersion> from = DriverVersion::Parse(text);
  if (!from.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--from-driver: ", from.status().message()));
  }
  if (!from->OlderThan(serving)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--from-driver: ", text, " is not an older driver than the GPU's ",
        serving.text(),
        " (only records of an older driver are re-timed)"));
  }
  return absl::OkStatus();
}

// Whether `r`, stored under `device`'s key, is to be re-timed under driver
// `serving`: measured under an older driver, or under --from-driver's.
bool ToRetime(const Record& r, const DeviceKey& device,
              const DriverVersion& serving, const std::string& from_driver) {
  if (r.key.device != device) return false;
  absl::StatusOr<DriverVersion> driver = DriverVersion::Parse(r.driver_version);
  if (!driver.ok() || !driver->OlderThan(serving)) return false;
  if (from_driver.empty()) return true;
  return driver->Compare(*DriverVersion::Parse(from_driver)) == 0;
}

// --driver: the records of the device's own key measured under an older
// driver than the device's (--from-driver: under that one), re-timed.
int RunRevalidateDriver(CliContext& ctx, const RevalidateFlags& f) {
  const absl::Time start = absl::Now();
  std::string driver;
  absl::StatusOr<DeviceKey> device =
      ctx.ResolveDevice(f.filter.gpu, nullptr, nullptr, &driver);
  if (!device.ok()) return ctx.Fail(device.status());
  absl::StatusOr<DriverVersion> serving = DriverVersion::Parse(driver);
  if (!serving.ok()) {
    return ctx.Fail(absl::FailedPreconditionError(absl::StrCat(
        "the GPU's driver cannot be ordered, so no record is older: ",
        serving.status().message())));
  }
  if (!f.from_driver.empty()) {
    if (absl::Status s = CheckFromDriver(f.from_driver, *serving); !s.ok()) {
      return ctx.Fail(s);
    }
  }
  absl::StatusOr<std::vector<Record>> stored = SourceRecords(
      ctx, f, *device,
      {absl::StrCat("cudnn=", CudnnVersionText(device->cudnn_version))});
  if (!stored.ok()) return ctx.Fail(stored.status());
  RevalidateReport report;
  report.to = *device;
  report.to_driver = driver;
  report.from_driver = f.from_driver;
  std::vector<PrewarmItem> items;
  std::vector<const Record*> source_of;
  for (const Record& r : *stored) {
    if (!ToRetime(r, *device, *serving, f.from_driver)) continue;
    items.push_back({r.key, r.key.HashText()});
    source_of.push_back(&r);
  }
  report.old_records = static_cast<int64_t>(items.size());
  ctx.err() << items.size() << " records of " << device->gpu_model
            << ", cuDNN " << CudnnVersionText(device->cudnn_version)
            << " measured under "
            << (f.from_driver.empty() ? "an older driver than "
                                      : "driver " + f.from_driver + ", not ")
            << driver << ", to re-time\n";
  PrewarmOptions options = SendOptions(f);
  options.revalidate_older_driver = true;
  return SendAndReport(ctx, items, source_of, options, start, report);
}

// Which form the flags ask for; INVALID_ARGUMENT where they mix the two or
// name neither.
absl::Status CheckForm(const RevalidateFlags& f) {
  const bool driver = f.driver || !f.from_driver.empty();
  if (driver && !f.from.empty()) {
    return absl::InvalidArgumentError(
        "--from (after a cuDNN upgrade) and --driver/--from-driver (after a "
        "driver upgrade) cannot be combined: run one, then the other");
  }
  if (!driver && f.from.empty()) {
    return absl::InvalidArgumentError(
        "give --from VERSION (after a cuDNN upgrade) or --driver (after a "
        "driver upgrade)");
  }
  if (driver && !f.to.empty()) {
    return absl::InvalidArgumentError(
        "--to names a cuDNN version: only with --from");
  }
  if (driver && !f.fleet.url.empty()) {
    return absl::InvalidArgumentError(
        "--driver re-times the daemon's own records; --fleet is for --from");
  }
  return absl::OkStatus();
}

int RunRevalidateCommand(CliContext& ctx, const RevalidateFlags& f) {
  if (absl::Status form = CheckForm(f); !form.ok()) return ctx.Fail(form);
  if (f.driver || !f.from_driver.empty()) return RunRevalidateDriver(ctx, f);
  return RunRevalidate(ctx, f);
}

}  // namespace

void AddRevalidateCommand(CLI::App& app, CliContext& ctx, int* exit_code) {
  auto flags = std::make_shared<RevalidateFlags>();
  CLI::App* cmd = app.add_subcommand(
      "revalidate",
      "Make a new cuDNN version's records from an older one's by re-timing "
      "the old choices, not by full searches (--from: old versions' records "
      "are only read); or, after a driver upgrade (--driver), re-time the "
      "records measured under an older driver: each re-timed record "
      "replaces the old driver's record of its key, which the database "
      "keeps whole in its superseded_records table (`tunedb export` first "
      "also keeps a file of them). Rerun to resume");
  cmd->add_option("--from", flags->from,
                  "The old cuDNN version whose records are re-timed, e.g. "
                  "9.14 (or --driver)");
  cmd->add_flag("--driver", flags->driver,
                "After a driver upgrade: re-time the records of the GPU's "
                "key measured under an older driver than the GPU's; each "
                "replaces the old driver's record of its key (not with "
                "--from)");
  cmd->add_option("--from-driver", flags->from_driver,
                  "With --driver: only the records of this older driver, "
                  "e.g. 575.57.08 (implies --driver)");
  cmd->add_option("--to", flags->to,
                  "The new cuDNN version (default: the one the daemon serves "
                  "for the GPU other than --from)");
  cmd->add_option("--limit", flags->limit,
                  "Revalidate at most this many keys (0 = all)");
  cmd->add_option("--window", flags->window, "Requests in flight")
      ->capture_default_str();
  cmd->add_flag("--no-progress", flags->no_progress, "No progress bar");
  AddModelFlags(cmd, &flags->models, &flags->input);
  AddFilterFlags(cmd, &flags->filter);
  AddFleetFlags(cmd, &flags->fleet);
  cmd->callback(
      [&ctx, flags, exit_code] {
        *exit_code = RunRevalidateCommand(ctx, *flags);
      });
}

}  // namespace tunedb::tuner
