// `tunedb stats`, `tunedb devices` and `tunedb invalidate FILTER`.
#include <map>
#include <memory>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "proto/grpc_status.h"
#include "tuner/commands.h"
#include "tuner/exit_codes.h"
#include "tuner/filter_flags.h"
#include "tuner/format.h"
#include "tuner/progress_bar.h"
#include "tuner/record_stream.h"
#include "tuner/render.h"
#include "tuner/table.h"

namespace tunedb::tuner {
namespace {

// `tunedb stats`: the daemon's counters, as it sends them.
nlohmann::json StatsToJson(const v1::StatsResponse& s) {
  nlohmann::json queues = nlohmann::json::object();
  for (const auto& [ordinal, depth] : s.queue_depths()) {
    queues[absl::StrCat(ordinal)] = depth;
  }
  nlohmann::json j = nlohmann::json({{"version", s.version()},
                                     {"uptime_s", s.uptime_s()},
                                     {"finder", s.finder()},
                                     {"records", s.records()},
                                     {"hits", s.hits()},
                                     {"misses", s.misses()},
                                     {"predictions", s.predictions()},
                                     {"searches", s.searches()},
                                     {"search_failures", s.search_failures()},
                                     {"coalesced", s.coalesced()},
                                     {"waited_for_idle", s.waited_for_idle()},
                                     {"revalidated", s.revalidated()},
                                     {"revalidation_full_searches",
                                      s.revalidation_full_searches()},
                                     {"rejected", s.rejected()},
                                     {"search_ms_total", s.search_ms_total()},
                                     {"queue_depths", queues},
                                     {"database_path", s.database_path()},
                                     {"database_bytes", s.database_bytes()}});
  if (s.has_fleet()) {
    const v1::FleetStats& f = s.fleet();
    j["fleet"] = {
        {"database", f.database()},     {"connected", f.connected()},
        {"last_error", f.last_error()}, {"last_error_us", f.last_error_us()},
        {"outbox", f.outbox()},         {"published", f.published()},
        {"fetched", f.fetched()},       {"claims", f.claims()},
        {"waits", f.waits()},           {"errors", f.errors()},
        {"jobs_done", f.jobs_done()}};
  }
  nlohmann::json reported = nlohmann::json::object();
  for (const auto& [name, sum] : s.reported()) reported[name] = sum;
  j["reported"] = reported;
  j["reports"] = s.reports();
  return j;
}

void PrintDaemonStats(const v1::StatsResponse& s, std::ostream& out) {
  const int64_t answered = s.hits() + s.misses();
  std::string queues;
  for (const auto& [ordinal, depth] : s.queue_depths()) {
    absl::StrAppend(&queues, queues.empty() ? "" : ", ", "gpu", ordinal, ": ",
                    depth);
  }
  PrintKeyValues(
      out,
      {{"daemon", absl::StrCat("tunedbd ", s.version(), ", up ",
                               FormatSeconds(s.uptime_s()))},
       {"finder", s.finder()},
       {"records", absl::StrCat(s.records())},
       {"hits",
        absl::StrCat(s.hits(),
                     answered > 0 ? absl::StrFormat(" (%.1f%%)",
                                                    100.0 * s.hits() / answered)
                                  : "")},
       {"misses",
        absl::StrCat(s.misses(),
                     s.predictions() > 0
                         ? absl::StrCat(" (", s.predictions(),
                                        " answered by prediction)")
                         : "")},
       {"searches", absl::StrCat(s.searches(), " (", s.search_failures(),
                                 " failed, ", s.coalesced(), " coalesced, ",
                                 s.waited_for_idle(),
                                 " waited for an idle GPU)")},
       {"revalidations",
        absl::StrCat(s.revalidated(), " re-timed an older version's choices, ",
                     s.revalidation_full_searches(),
                     " needed a full search")},
       {"rejected (queue full)", absl::StrCat(s.rejected())},
       {"search time", FormatSeconds(s.search_ms_total() / 1000)},
       {"queues", queues.empty() ? "-" : queues},
       {"database", absl::StrCat(s.database_path(), " (",
                                 FormatBytes(s.database_bytes()), ")")}});
}

void PrintFleetStats(const v1::FleetStats& f, std::ostream& out) {
  PrintKeyValues(
      out,
      {{"fleet",
        absl::StrCat(f.database(),
                     f.connected() ? " (connected)" : " (NOT CONNECTED)")},
       {"fleet outbox",
        absl::StrCat(f.outbox(), " waiting, ", f.published(), " published")},
       {"fleet answers", absl::StrCat(f.fetched(), " fetched, ", f.claims(),
                                      " searches claimed, ", f.waits(),
                                      " waited for another host")},
       {"fleet jobs done", absl::StrCat(f.jobs_done())},
       {"fleet errors",
        f.errors() == 0
            ? std::string("0")
            : absl::StrCat(f.errors(), ", last ", FormatTime(f.last_error_us()),
                           ": ", f.last_error())}});
}

// What `tunedb run --report` added: "preload.hit" is "hit" under "drop-in",
// in name order.
void PrintDropInStats(const v1::StatsResponse& s, std::ostream& out) {
  const std::map<std::string, int64_t> sums(s.reported().begin(),
                                            s.reported().end());
  std::string preload;
  for (const auto& [name, sum] : sums) {
    if (!absl::StartsWith(name, "preload.") || name == "preload.calls") {
      continue;
    }
    absl::StrAppend(&preload, preload.empty() ? "" : ", ", sum, " ",
                    name.substr(8));
  }
  const auto calls = sums.find("preload.calls");
  PrintKeyValues(
      out, {{"drop-in (tunedb run --report)",
             absl::StrCat(s.reports(), " reports, ",
                          calls == sums.end() ? 0 : calls->second, " calls",
                          preload.empty() ? "" : ": ", preload)}});
}

void PrintStats(const v1::StatsResponse& s, std::ostream& out) {
  PrintDaemonStats(s, out);
  if (s.has_fleet()) PrintFleetStats(s.fleet(), out);
  if (s.reports() > 0) PrintDropInStats(s, out);
}

int RunStats(CliContext& ctx) {
  auto stats = ctx.Call(&v1::TuneDb::Stub::Stats, v1::StatsRequest());
  if (!stats.ok()) return ctx.Fail(stats.status());
  Render(ctx, FormOf(ctx), *stats,
         Renderer<v1::StatsResponse>{StatsToJson, PrintStats});
  return kExitOk;
}

// `tunedb devices`: the daemon's GPUs.
std::string ComputeCapability(const v1::DeviceInfo& d) {
  return absl::StrCat(d.key().cc_major(), ".", d.key().cc_minor());
}

nlohmann::json DevicesToJson(const v1::DevicesResponse& r) {
  nlohmann::json devices = nlohmann::json::array();
  for (const v1::DeviceInfo& d : r.devices()) {
    devices.push_back(
        {{"ordinal", d.ordinal()},
         {"gpu", d.key().gpu_model()},
         {"cc", ComputeCapability(d)},
         {"sms", d.key().sm_count()},
         {"cudnn", CudnnVersionText(d.key().cudnn_version())},
         {"cuda", CudaVersionText(d.key().cuda_runtime_version())},
         {"uuid", d.uuid()},
         {"driver", d.driver_version()},
         {"memory_bytes", d.total_memory_bytes()},
         {"mig", d.mig()},
         {"queue_depth", d.queue_depth()},
         {"healthy", d.healthy()}});
  }
  return {{"finder", r.finder()}, {"devices", devices}};
}

Table DevicesTable(const v1::DevicesResponse& r) {
  Table t({"ordinal>", "gpu", "cc", "sms>", "cudnn", "cuda", "memory>", "mig",
           "queue>", "health", "uuid", "driver"});
  for (const v1::DeviceInfo& d : r.devices()) {
    t.AddRow({absl::StrCat(d.ordinal()), d.key().gpu_model(),
              ComputeCapability(d), absl::StrCat(d.key().sm_count()),
              CudnnVersionText(d.key().cudnn_version()),
              CudaVersionText(d.key().cuda_runtime_version()),
              FormatBytes(d.total_memory_bytes()), d.mig() ? "yes" : "no",
              absl::StrCat(d.queue_depth()), d.healthy() ? "ok" : "DOWN",
              d.uuid(), d.driver_version()});
  }
  return t;
}

void PrintDevices(const v1::DevicesResponse& r, std::ostream& out) {
  DevicesTable(r).Print(out);
  out << "finder: " << r.finder() << "\n";
}

int RunDevices(CliContext& ctx, bool csv) {
  auto devices = ctx.Call(&v1::TuneDb::Stub::Devices, v1::DevicesRequest());
  if (!devices.ok()) return ctx.Fail(devices.status());
  Render(
      ctx, FormOf(ctx, csv), *devices,
      Renderer<v1::DevicesResponse>{DevicesToJson, PrintDevices, DevicesTable});
  return kExitOk;
}

struct InvalidateFlags {
  std::vector<std::string> terms;  // positional field=value
  FilterFlags filter;
  bool all = false;
  bool yes = false;
};

// On stderr: rows the filter could not be matched against, left alone.
void NoteUnreadable(CliContext& ctx, int64_t unreadable) {
  if (unreadable == 0) return;
  ctx.err() << "tunedb: " << unreadable
            << " stored record(s) cannot be read and are left alone (`tunedb "
               "doctor` lists them, `tunedb repair` quarantines them)\n";
}

// A usage error (said on stderr) unless exactly one of a filter and --all
// is given.
bool OneOfFilterAndAll(CliContext& ctx, const InvalidateFlags& f,
                       const v1::Filter& filter) {
  const bool empty = filter.fields().empty() && filter.since_us() == 0 &&
                     filter.until_us() == 0;
  if (empty && !f.all) {
    ctx.err() << "tunedb: error: no filter given; to delete every record "
                 "pass --all\n";
    return false;
  }
  if (!empty && f.all) {
    ctx.err() << "tunedb: error: --all deletes everything; it cannot be "
                 "combined with a filter\n";
    return false;
  }
  return true;
}

// The stored records a filter matches, and those it cannot be matched
// against (unreadable: the daemon leaves them alone).
struct MatchCount {
  int64_t matching = 0;
  int64_t unreadable = 0;
};

absl::StatusOr<MatchCount> CountMatching(CliContext& ctx,
                                         const v1::Filter& filter) {
  MatchCount count;
  RETURN_IF_ERROR(ForEachRecord(
      ctx, filter, 0, 0,
      [&](const v1::Record&) {
        ++count.matching;
        return true;
      },
      [&](const v1::BadRow&) {
        ++count.unreadable;
        return true;
      }));
  return count;
}

// --yes, or a "y" typed at the terminal; otherwise a usage error (said).
bool ConfirmDelete(CliContext& ctx, const InvalidateFlags& f,
                   int64_t matching, const std::string& what) {
  if (f.yes) return true;
  if (!ctx.io().stdin_is_tty) {
    ctx.err() << "tunedb: error: " << matching << " record(s) match " << what
              << "; stdin is not a terminal, so pass --yes to confirm\n";
    return false;
  }
  ctx.err() << "Delete " << matching << " record(s) matching " << what
            << "? [y/N] " << std::flush;
  std::string answer;
  std::getline(ctx.in(), answer);
  answer = absl::AsciiStrToLower(absl::StripAsciiWhitespace(answer));
  if (answer == "y" || answer == "yes") return true;
  ctx.err() << "not confirmed; nothing deleted\n";
  return false;
}

// `text`, or {"deleted": N} with --json.
void PrintDeleted(CliContext& ctx, int64_t deleted, const std::string& text) {
  if (ctx.json()) {
    ctx.out() << nlohmann::json({{"deleted", deleted}}).dump() << "\n";
  } else {
    ctx.out() << text << "\n";
  }
}

int RunInvalidate(CliContext& ctx, const InvalidateFlags& f) {
  auto filter = BuildFilter(f.filter, f.terms, absl::Now());
  if (!filter.ok()) return ctx.Fail(filter.status());
  if (!OneOfFilterAndAll(ctx, f, *filter)) return kExitUsage;
  absl::StatusOr<MatchCount> count = CountMatching(ctx, *filter);
  if (!count.ok()) return ctx.Fail(count.status());
  NoteUnreadable(ctx, count->unreadable);
  const std::string what = DescribeFilter(*filter);
  if (count->matching == 0) {
    PrintDeleted(ctx, 0, absl::StrCat("no records match ", what));
    return kExitOk;
  }
  if (!ConfirmDelete(ctx, f, count->matching, what)) return kExitUsage;
  v1::InvalidateRequest request;
  *request.mutable_filter() = *filter;
  request.set_all(f.all);
  absl::StatusOr<v1::InvalidateResponse> response =
      ctx.Call(&v1::TuneDb::Stub::Invalidate, request);
  if (!response.ok()) return ctx.Fail(response.status());
  PrintDeleted(ctx, response->deleted(),
               absl::StrCat("deleted ", response->deleted(), " record(s)"));
  return kExitOk;
}

}  // namespace

void AddAdminCommands(CLI::App& app, CliContext& ctx, int* exit_code) {
  app.add_subcommand("stats", "Daemon counters, database size and queues")
      ->callback([&ctx, exit_code] { *exit_code = RunStats(ctx); });
  auto csv = std::make_shared<bool>(false);
  CLI::App* devices =
      app.add_subcommand("devices", "The GPUs the daemon searches on");
  devices->add_flag("--csv", *csv, "CSV with a header row on stdout");
  devices->callback(
      [&ctx, csv, exit_code] { *exit_code = RunDevices(ctx, *csv); });

  auto f = std::make_shared<InvalidateFlags>();
  CLI::App* inv = app.add_subcommand(
      "invalidate",
      "Delete records matching a filter (asks first; --yes when stdin is "
      "not a terminal)");
  inv->add_option("FILTER", f->terms, "field=value terms, e.g. op=fwd n=64");
  AddFilterFlags(inv, &f->filter);
  inv->add_flag("--all", f->all, "Delete every record");
  inv->add_flag("-y,--yes", f->yes, "Do not ask for confirmation");
  inv->callback([&ctx, f, exit_code] { *exit_code = RunInvalidate(ctx, *f); });
}

}  // namespace tunedb::tuner
