#include "tuner/fleet_prewarm.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/valid_key.h"
#include "nlohmann/json.hpp"
#include "store/fleet/fleet_jobs.h"
#include "store/fleet/fleet_options.h"
#include "tuner/exit_codes.h"
#include "tuner/interrupt.h"
#include "tuner/progress_bar.h"
#include "tuner/render.h"
#include "tuner/table.h"

namespace tunedb::tuner {
namespace {

std::string Detail(const FleetBatchProgress& p) {
  return absl::StrCat(p.running, " running, ", p.queued, " queued, ",
                      p.searched, " searched, ", p.failed, " failed");
}

}  // namespace

void AddFleetFlags(CLI::App* cmd, FleetPrewarmFlags* flags) {
  cmd->add_option("--fleet", flags->url,
                  "Fleet database URL: queue the problems as fleet jobs that "
                  "every daemon serving the device runs, and show fleet-wide "
                  "progress (docs/fleet.md); rerun to resume");
  cmd->add_option("--fleet-password-file", flags->password_file,
                  "libpq password file for --fleet");
  cmd->add_option("--fleet-batch", flags->batch,
                  "Name of the fleet batch (default: named after its "
                  "problems, so the same command resumes it)");
  cmd->add_flag("!--no-wait", flags->wait,
                "With --fleet: queue the jobs and return without waiting");
}

std::string FleetBatchName(const std::vector<ProblemKey>& keys,
                           int revalidate_from) {
  std::vector<std::string> texts;
  for (const ProblemKey& k : keys) texts.push_back(k.ToText());
  std::sort(texts.begin(), texts.end());
  std::string all;
  for (const std::string& t : texts) absl::StrAppend(&all, t, "\n");
  if (revalidate_from != 0) {
    return absl::StrCat("revalidate-", revalidate_from, "-",
                        KeyHashText(KeyTextHash(all)));
  }
  return absl::StrCat("prewarm-", KeyHashText(KeyTextHash(all)));
}

namespace {

// What a fleet prewarm shows: the batch, what was queued, where it stands.
struct FleetPrewarmResult {
  std::string what;  // "prewarm" or "revalidation"
  std::string batch;
  FleetEnqueued enqueued;
  FleetBatchProgress progress;
};

nlohmann::json FleetPrewarmToJson(const FleetPrewarmResult& r) {
  const FleetBatchProgress& p = r.progress;
  return {{"batch", r.batch},
          {"added", r.enqueued.added},
          {"requeued", r.enqueued.requeued},
          {"total", p.total()},
          {"done", p.done},
          {"searched", p.searched},
          {"running", p.running},
          {"queued", p.queued},
          {"failed", p.failed},
          {"errors", p.errors}};
}

void PrintFleetPrewarm(const FleetPrewarmResult& r, std::ostream& out) {
  const FleetBatchProgress& p = r.progress;
  out << "fleet " << r.what << " summary (" << r.batch << ")\n";
  PrintKeyValues(out, {{"  jobs", absl::StrCat(p.total())},
                       {"  done", absl::StrCat(p.done)},
                       {"  searched (others were stored already)",
                        absl::StrCat(p.searched)},
                       {"  running", absl::StrCat(p.running)},
                       {"  queued", absl::StrCat(p.queued)},
                       {"  failed", absl::StrCat(p.failed)}});
}

// Polls the batch's progress into `progress` until no job is queued or
// running, or an interrupt (then *interrupted).
absl::Status FollowBatch(CliContext& ctx, const FleetPrewarmFlags& flags,
                         FleetJobs& jobs, const std::string& batch,
                         FleetBatchProgress& progress, bool* interrupted) {
  ProgressBar bar(ctx.err(), ctx.io().stderr_is_tty, "fleet", progress.total(),
                  std::chrono::seconds(10));
  if (!flags.progress) bar.Silence();
  while (progress.queued + progress.running > 0) {
    if (InterruptRequested()) {
      *interrupted = true;
      break;
    }
    bar.Update(progress.done + progress.failed, Detail(progress));
    std::this_thread::sleep_for(
        std::chrono::milliseconds(static_cast<int64_t>(flags.poll_s * 1000)));
    auto next = jobs.Progress(batch);
    if (!next.ok()) return next.status();
    progress = *std::move(next);
  }
  bar.Finish(Detail(progress));
  return absl::OkStatus();
}

}  // namespace

int RunFleetPrewarm(CliContext& ctx, const FleetPrewarmFlags& flags,
                    const std::vector<ProblemKey>& keys, int revalidate_from) {
  FleetOptions options;
  options.url = flags.url;
  options.password_file = flags.password_file;
  auto jobs = FleetJobs::Open(options);
  if (!jobs.ok()) return ctx.Fail(jobs.status());
  FleetPrewarmResult result;
  result.what = revalidate_from != 0 ? "revalidation" : "prewarm";
  result.batch = flags.batch.empty() ? FleetBatchName(keys, revalidate_from)
                                     : flags.batch;
  auto enqueued = (*jobs)->Enqueue(result.batch, keys, revalidate_from);
  if (!enqueued.ok()) return ctx.Fail(enqueued.status());
  result.enqueued = *enqueued;
  ctx.err() << "fleet batch " << result.batch << " on " << (*jobs)->display()
            << ": " << enqueued->added << " jobs added, " << enqueued->requeued
            << " failed jobs queued again\n";

  auto progress = (*jobs)->Progress(result.batch);
  if (!progress.ok()) return ctx.Fail(progress.status());
  result.progress = *std::move(progress);
  bool interrupted = false;
  if (flags.wait) {
    absl::Status followed = FollowBatch(ctx, flags, **jobs, result.batch,
                                        result.progress, &interrupted);
    if (!followed.ok()) return ctx.Fail(followed);
  }
  Render(ctx, FormOf(ctx), result,
         Renderer<FleetPrewarmResult>{FleetPrewarmToJson, PrintFleetPrewarm});
  const FleetBatchProgress& p = result.progress;
  if (!ctx.json()) {
    for (const std::string& e : p.errors) ctx.err() << "failed: " << e << "\n";
  }
  if (interrupted || (!flags.wait && p.queued + p.running > 0)) {
    ctx.err() << "the jobs stay in the fleet: rerun the same command to "
                 "follow them\n";
    return interrupted ? kExitInterrupted : kExitOk;
  }
  return p.failed > 0 ? kExitPartial : kExitOk;
}

int RunFleetItems(CliContext& ctx, FleetPrewarmFlags flags, bool progress,
                  const std::vector<PrewarmItem>& items, int64_t limit,
                  int revalidate_from) {
  std::vector<ProblemKey> keys;
  for (const PrewarmItem& item : items) keys.push_back(item.key);
  if (limit > 0 && static_cast<int64_t>(keys.size()) > limit) {
    keys.resize(limit);
  }
  flags.progress = progress;
  ScopedSigintHandler sigint(ctx.io().handle_signals);
  return RunFleetPrewarm(ctx, flags, keys, revalidate_from);
}

}  // namespace tunedb::tuner
