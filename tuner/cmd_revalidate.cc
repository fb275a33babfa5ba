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
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"
#include "proto/convert.h"
#include "tuner/choice_diff.h"
#include "tuner/commands.h"
#include "tuner/exit_codes.h"
#include "tuner/filter_flags.h"
#include "tuner/fleet_prewarm.h"
#include "tuner/interrupt.h"
#include "tuner/model_matcher.h"
#include "tuner/prewarm_runner.h"
#include "tuner/progress_bar.h"
#include "tuner/record_stream.h"
#include "tuner/render.h"
#include "tuner/table.h"

namespace tunedb::tuner {
namespace {

struct RevalidateFlags {
  std::string from, to;
  FilterFlags filter;  // its --gpu also picks the device
  std::vector<std::string> models;  // --model: built-in models' layers only
  std::string input;                 // --input: their input size
  int64_t limit = 0;
  int window = 8;
  bool no_progress = false;
  FleetPrewarmFlags fleet;  // --fleet: the keys become fleet jobs
};

struct RevalidateResult {
  int from = 0;
  DeviceKey to;
  int64_t old_records = 0;  // records of the old version matched
  PrewarmSummary run;
  int64_t kept = 0;
  int64_t changed = 0;
  int64_t full_searches = 0;
  // Changed keys: the old choice re-timed on the new version over the new
  // choice (where the new record timed both).
  std::vector<double> speedups;
  // The old version's search time of the keys searched in this run.
  double old_search_ms = 0;
  double wall_s = 0;
  ChoiceDiff diff;  // the revalidated keys, by group
};

std::string SpeedupText(const std::vector<double>& speedups) {
  if (speedups.empty()) return "";
  return absl::StrFormat(" (old choice %.3fx the new one's time, median; "
                         "at most %.3fx)",
                         Median(speedups),
                         *std::max_element(speedups.begin(), speedups.end()));
}

int64_t ChangedIn(const std::vector<KeyChange>& changes) {
  return std::count_if(changes.begin(), changes.end(),
                       [](const KeyChange& c) { return c.changed; });
}

nlohmann::json ResultToJson(const RevalidateResult& r) {
  nlohmann::json j;
  j["from_cudnn"] = CudnnVersionText(r.from);
  j["to"] = r.to.ToText();
  j["old_records"] = r.old_records;
  j["already_stored"] = r.run.already_stored;
  j["kept"] = r.kept;
  j["changed"] = r.changed;
  j["median_speedup_of_changed"] = Median(r.speedups);
  j["full_searches"] = r.full_searches;
  j["failed"] = r.run.failed;
  j["not_sent"] = r.run.not_sent + r.run.unanswered;
  j["search_s"] = r.run.search_ms_spent / 1000;
  j["old_search_s"] = r.old_search_ms / 1000;
  j["wall_s"] = r.wall_s;
  j["interrupted"] = r.run.interrupted;
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& [name, changes] : r.diff.groups) {
    groups.push_back({{"group", name},
                      {"revalidated", changes.size()},
                      {"changed", ChangedIn(changes)}});
  }
  j["groups"] = groups;
  nlohmann::json failures = nlohmann::json::array();
  for (const PrewarmFailure& f : r.run.failures) {
    failures.push_back({{"key", f.key}, {"error", f.error}});
  }
  j["failures"] = failures;
  return j;
}

void PrintResult(const RevalidateResult& r, std::ostream& out) {
  const double ratio =
      r.old_search_ms > 0 ? r.run.search_ms_spent / r.old_search_ms : 0;
  out << "revalidated from cuDNN " << CudnnVersionText(r.from) << " for "
      << r.to.gpu_model << ", cuDNN " << CudnnVersionText(r.to.cudnn_version)
      << "\n";
  Table t({"", "keys>"});
  t.AddRow({"old records matched", absl::StrCat(r.old_records)});
  t.AddRow({"already stored (skipped)", absl::StrCat(r.run.already_stored)});
  t.AddRow({"choice kept", absl::StrCat(r.kept)});
  t.AddRow({"choice changed", absl::StrCat(r.changed)});
  t.AddRow({"full search needed", absl::StrCat(r.full_searches)});
  t.AddRow({"failed", absl::StrCat(r.run.failed)});
  if (r.run.not_sent + r.run.unanswered > 0) {
    t.AddRow({"not done (rerun to resume)",
              absl::StrCat(r.run.not_sent + r.run.unanswered)});
  }
  t.Print(out);
  out << "\nchanged choices" << (r.speedups.empty() ? ": none timed both ways"
                                                    : SpeedupText(r.speedups))
      << "\nsearch time " << FormatSeconds(r.run.search_ms_spent / 1000);
  if (ratio > 0) {
    out << absl::StrFormat(" (%.2fx the old version's searches of these "
                           "keys, %s)",
                           ratio, FormatSeconds(r.old_search_ms / 1000));
  }
  out << ", wall time " << FormatSeconds(r.wall_s) << "\n";
  if (r.diff.groups.empty()) return;
  out << "\n";
  Table g({"group", "revalidated>", "changed>"});
  for (const auto& [name, changes] : r.diff.groups) {
    g.AddRow({name, absl::StrCat(changes.size()),
              absl::StrCat(ChangedIn(changes))});
  }
  g.Print(out);
}

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
  return ctx.ResolveDevice(f.filter.gpu, nullptr, [&](const DeviceKey& d) {
    return to ? d.cudnn_version == *to : d.cudnn_version != from;
  });
}

// Counts one answer: kept, changed or searched in full.
void Classify(RevalidateResult& r, const Record& source, const Record& fresh,
              std::vector<Record>& sources, std::vector<Record>& revalidated) {
  r.old_search_ms += source.search_ms;
  if (fresh.revalidated_from_cudnn != r.from) {
    ++r.full_searches;
    return;
  }
  sources.push_back(source);
  revalidated.push_back(fresh);
}

// --fleet: every daemon serving the new version's device runs the keys as
// revalidation jobs, each from the old record in its store or the fleet's.
// What each job kept or changed is in its host's records (`tunedb diff`).
int RevalidateOnFleet(CliContext& ctx, const RevalidateFlags& f,
                      const std::vector<PrewarmItem>& items, int from) {
  return RunFleetItems(ctx, f.fleet, !f.no_progress, items, f.limit, from);
}

int RunRevalidate(CliContext& ctx, const RevalidateFlags& f) {
  const absl::Time start = absl::Now();
  absl::StatusOr<int> from = ParseCudnnVersionFlag(f.from);
  if (!from.ok()) return ctx.Fail(from.status());
  absl::StatusOr<ModelMatcher> models = ModelMatcher::Create(f.models, f.input);
  if (!models.ok()) return ctx.Fail(models.status());
  absl::StatusOr<DeviceKey> to = TargetDevice(ctx, f, *from);
  if (!to.ok()) return ctx.Fail(to.status());
  FilterFlags old_records = f.filter;
  old_records.gpu = to->gpu_model;  // --gpu may be an ordinal or a part
  absl::StatusOr<v1::Filter> filter = BuildFilter(
      old_records, {absl::StrCat("cudnn=", CudnnVersionText(*from))},
      absl::Now());
  if (!filter.ok()) return ctx.Fail(filter.status());
  absl::StatusOr<std::vector<Record>> old = RecordsMatching(ctx, *filter);
  if (!old.ok()) return ctx.Fail(old.status());
  if (!models->empty()) {
    old->erase(std::remove_if(old->begin(), old->end(),
                              [&](const Record& r) {
                                return !models->Matches(r.key.problem);
                              }),
               old->end());
  }

  RevalidateResult result;
  result.from = *from;
  result.to = *to;
  result.old_records = static_cast<int64_t>(old->size());
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

  std::vector<Record> sources, revalidated;
  PrewarmOptions options;
  options.limit = f.limit;
  options.window = std::max(1, f.window);
  options.progress = !f.no_progress;
  options.revalidate_from_cudnn = *from;
  absl::Status bad_answer;
  options.on_answer = [&](size_t i, const v1::TuneResponse& answer) {
    if (!answer.searched()) return;
    absl::StatusOr<Record> fresh = FromProto(answer.record());
    if (!fresh.ok()) {
      bad_answer = fresh.status();
      return;
    }
    Classify(result, *source_of[i], *fresh, sources, revalidated);
  };
  ScopedSigintHandler sigint(ctx.io().handle_signals);
  absl::StatusOr<PrewarmSummary> run = RunPrewarm(ctx, items, options);
  if (!run.ok()) return ctx.Fail(run.status());
  if (!bad_answer.ok()) return ctx.Fail(bad_answer);
  result.run = *std::move(run);
  result.diff.Add(sources, revalidated);
  for (const auto& [name, changes] : result.diff.groups) {
    for (const KeyChange& c : changes) {
      if (!c.changed) {
        ++result.kept;
        continue;
      }
      ++result.changed;
      if (c.speedup) result.speedups.push_back(*c.speedup);
    }
  }
  result.wall_s = absl::ToDoubleSeconds(absl::Now() - start);
  Render(ctx, FormOf(ctx), result,
         Renderer<RevalidateResult>{ResultToJson, PrintResult});
  if (!result.run.stream_status.ok()) {
    return ctx.Fail(result.run.stream_status);
  }
  if (result.run.interrupted) {
    ctx.err() << "interrupted: rerun the same command to resume (keys "
                 "already revalidated are skipped)\n";
    return kExitInterrupted;
  }
  return result.run.failed > 0 ? kExitPartial : kExitOk;
}

}  // namespace

void AddRevalidateCommand(CLI::App& app, CliContext& ctx, int* exit_code) {
  auto flags = std::make_shared<RevalidateFlags>();
  CLI::App* cmd = app.add_subcommand(
      "revalidate",
      "Make a new cuDNN version's records from an older one's by re-timing "
      "the old choices, not by full searches (old records are only read; "
      "rerun to resume)");
  cmd->add_option("--from", flags->from,
                  "The old cuDNN version whose records are re-timed, e.g. "
                  "9.14")
      ->required();
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
      [&ctx, flags, exit_code] { *exit_code = RunRevalidate(ctx, *flags); });
}

}  // namespace tunedb::tuner
