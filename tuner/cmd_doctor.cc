// `tunedb doctor`: checks that the daemon is reachable, sees GPUs, runs a
// compatible version, answers lookups, and that its database is intact
// (through Stats, every stored record read back through CheckRecords, and
// with --db by a local read-only PRAGMA quick_check of the whole file: the
// daemon's own check at start-up is bounded); `tunedb repair`: quarantines
// the records that cannot be read (QuarantineRecords).
#include <sqlite3.h>

#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "proto/convert.h"
#include "proto/grpc_status.h"
#include "tunedb/version.h"
#include "tuner/commands.h"
#include "tuner/exit_codes.h"
#include "tuner/format.h"
#include "tuner/render.h"
#include "tuner/table.h"

namespace tunedb::tuner {
namespace {

struct Check {
  std::string name;
  bool ok = false;
  std::string detail;
};

// What `tunedb doctor` shows: each check's result, and the stored records
// that cannot be read.
struct DoctorReport {
  std::vector<Check> checks;
  std::vector<v1::BadRow> bad_rows;
  bool unreachable = false;

  bool ok() const {
    for (const Check& c : checks) {
      if (!c.ok) return false;
    }
    return true;
  }
};

template <typename Rows>
nlohmann::json BadRowsToJson(const Rows& rows) {
  nlohmann::json j = nlohmann::json::array();
  for (const v1::BadRow& bad : rows) {
    j.push_back({{"id", bad.id()},
                 {"key_text", bad.key_text()},
                 {"reason", bad.reason()}});
  }
  return j;
}

// "record 17 (reason); record 20 (reason)".
std::string DescribeBadRows(
    const google::protobuf::RepeatedPtrField<v1::BadRow>& rows) {
  std::vector<std::string> parts;
  for (const v1::BadRow& bad : rows) {
    parts.push_back(absl::StrCat("record ", bad.id(), " (", bad.reason(), ")"));
  }
  return absl::StrJoin(parts, "; ");
}

// Every stored record read back through the daemon.
Check CheckRecordRows(CliContext& ctx, DoctorReport& report) {
  Check c{"stored records readable", false, ""};
  // Reading every record takes longer than one lookup: no deadline.
  auto response =
      ctx.Call(&v1::TuneDb::Stub::CheckRecords, v1::CheckRecordsRequest(),
               CliContext::Deadline::kNone);
  if (!response.ok()) {
    c.detail = std::string(response.status().message());
    return c;
  }
  report.bad_rows.assign(response->bad_rows().begin(),
                         response->bad_rows().end());
  c.ok = response->bad_rows().empty();
  c.detail = c.ok ? absl::StrCat(response->checked(), " records read back")
                  : absl::StrCat(response->bad_rows_size(), " of ",
                                 response->checked(), " cannot be read: ",
                                 DescribeBadRows(response->bad_rows()),
                                 "; `tunedb repair` quarantines them");
  return c;
}

// PRAGMA quick_check on a read-only connection to `path`.
Check QuickCheckFile(const std::string& path) {
  Check c{"database file integrity", false, ""};
  sqlite3* db = nullptr;
  const std::string uri = absl::StrCat("file:", path, "?mode=ro");
  int rc = sqlite3_open_v2(uri.c_str(), &db,
                           SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  if (rc != SQLITE_OK) {
    c.detail = absl::StrCat("cannot open ", path, ": ",
                            db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close(db);
    return c;
  }
  sqlite3_busy_timeout(db, 5000);
  sqlite3_stmt* stmt = nullptr;
  rc = sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &stmt, nullptr);
  std::vector<std::string> problems;
  if (rc == SQLITE_OK) {
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      const unsigned char* text = sqlite3_column_text(stmt, 0);
      problems.push_back(text ? reinterpret_cast<const char*>(text) : "");
    }
  }
  if (rc != SQLITE_DONE) {
    c.detail = absl::StrCat(path, ": ", sqlite3_errmsg(db));
  } else if (problems.size() == 1 && problems[0] == "ok") {
    c.ok = true;
    c.detail = absl::StrCat(path, ": quick_check ok");
  } else {
    c.detail = absl::StrCat(path, ": ", absl::StrJoin(problems, "; "));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return c;
}

Check CheckFleet(const v1::FleetStats& f) {
  return {"fleet database", f.connected(),
          absl::StrCat(
              f.database(), f.connected() ? ": connected" : ": NOT connected",
              f.last_error().empty()
                  ? ""
                  : absl::StrCat(" (last error: ", f.last_error(), ")"),
              ", outbox ", f.outbox(), " waiting")};
}

// Versions, the database as the daemon sees it, its records and the fleet.
void CheckThroughStats(CliContext& ctx, DoctorReport& report) {
  auto stats = ctx.Call(&v1::TuneDb::Stub::Stats, v1::StatsRequest());
  if (!stats.ok()) {
    report.checks.push_back(
        {"versions", false, std::string(stats.status().message())});
    return;
  }
  const std::string cli_version = TUNEDB_VERSION_STRING;
  const std::string daemon_major =
      stats->version().substr(0, stats->version().find('.'));
  const std::string cli_major = cli_version.substr(0, cli_version.find('.'));
  report.checks.push_back(
      {"versions", daemon_major == cli_major,
       absl::StrCat("tunedbd ", stats->version(), ", tunedb ", cli_version,
                    ", finder ", stats->finder(),
                    stats->finder() == "simulated"
                        ? " (test double, not GPU timings)"
                        : "")});
  report.checks.push_back(
      {"database (via daemon)", true,
       absl::StrCat(stats->database_path(), ": ", stats->records(),
                    " records, ", FormatBytes(stats->database_bytes()))});
  report.checks.push_back(CheckRecordRows(ctx, report));
  if (stats->has_fleet()) report.checks.push_back(CheckFleet(stats->fleet()));
}

// The daemon's GPUs, all healthy; the first one's key (none if it serves
// none).
std::optional<v1::DeviceKey> CheckDevices(CliContext& ctx,
                                          DoctorReport& report) {
  auto devices = ctx.Call(&v1::TuneDb::Stub::Devices, v1::DevicesRequest());
  const v1::DevicesResponse none;
  const v1::DevicesResponse& d = devices.ok() ? *devices : none;
  std::vector<std::string> names;
  bool healthy = devices.ok() && d.devices_size() > 0;
  for (const v1::DeviceInfo& info : d.devices()) {
    names.push_back(absl::StrCat(info.ordinal(), ": ", info.key().gpu_model(),
                                 " cuDNN ",
                                 CudnnVersionText(info.key().cudnn_version()),
                                 info.healthy() ? "" : " (worker DOWN)"));
    healthy = healthy && info.healthy();
  }
  report.checks.push_back({"GPUs visible", healthy,
                           !devices.ok()
                               ? std::string(devices.status().message())
                           : names.empty() ? "the daemon serves no GPU"
                                           : absl::StrJoin(names, "; ")});
  if (d.devices_size() == 0) return std::nullopt;
  return d.devices(0).key();
}

// A lookup of a tiny problem exercises the read path end to end; NOT_FOUND
// is a correct answer.
Check CheckLookup(CliContext& ctx, const v1::DeviceKey& device) {
  v1::LookupRequest request;
  *request.mutable_device() = device;
  ConvProblem probe;
  probe.n = probe.c = probe.k = 1;
  probe.input = {1, 1, 0};
  probe.filter = {1, 1, 0};
  probe.stride = {1, 1, 0};
  probe.dilation = {1, 1, 0};
  ToProto(probe, request.mutable_problem());
  auto response = ctx.Call(&v1::TuneDb::Stub::Lookup, request);
  const bool ok = response.ok() || absl::IsNotFound(response.status());
  return {"lookup round trip", ok,
          ok ? "answered" : std::string(response.status().message())};
}

DoctorReport RunChecks(CliContext& ctx, const std::string& db_path) {
  DoctorReport report;
  auto stub = ctx.Stub();
  report.checks.push_back({"daemon reachable", stub.ok(),
                           stub.ok() ? ctx.options().address
                                     : std::string(stub.status().message())});
  report.unreachable = !stub.ok();
  if (stub.ok()) {
    CheckThroughStats(ctx, report);
    std::optional<v1::DeviceKey> device = CheckDevices(ctx, report);
    if (device) report.checks.push_back(CheckLookup(ctx, *device));
  }
  if (!db_path.empty()) report.checks.push_back(QuickCheckFile(db_path));
  return report;
}

nlohmann::json DoctorToJson(const DoctorReport& r) {
  nlohmann::json checks = nlohmann::json::array();
  for (const Check& c : r.checks) {
    checks.push_back({{"check", c.name}, {"ok", c.ok}, {"detail", c.detail}});
  }
  return {{"ok", r.ok()},
          {"checks", checks},
          {"bad_rows", BadRowsToJson(r.bad_rows)}};
}

void PrintDoctor(const DoctorReport& r, std::ostream& out) {
  Table t({"check", "result", "detail"});
  for (const Check& c : r.checks) {
    t.AddRow({c.name, c.ok ? "ok" : "FAIL", c.detail});
  }
  t.Print(out);
}

int RunDoctor(CliContext& ctx, const std::string& db_path) {
  const DoctorReport report = RunChecks(ctx, db_path);
  Render(ctx, FormOf(ctx), report,
         Renderer<DoctorReport>{DoctorToJson, PrintDoctor});
  if (report.unreachable) return kExitUnreachable;
  return report.ok() ? kExitOk : kExitError;
}

// `tunedb repair`: what the daemon moved to quarantine.
nlohmann::json RepairToJson(const v1::QuarantineRecordsResponse& r) {
  return {{"quarantined", BadRowsToJson(r.quarantined())}};
}

void PrintRepair(const v1::QuarantineRecordsResponse& r, std::ostream& out) {
  if (r.quarantined().empty()) {
    out << "every stored record reads back; nothing to repair\n";
    return;
  }
  out << "quarantined " << r.quarantined_size()
      << " unreadable record(s): " << DescribeBadRows(r.quarantined())
      << "\n(their stored values are kept in the tables "
         "quarantined_records and quarantined_results)\n";
}

int RunRepair(CliContext& ctx) {
  auto response =
      ctx.Call(&v1::TuneDb::Stub::QuarantineRecords,
               v1::QuarantineRecordsRequest(), CliContext::Deadline::kNone);
  if (!response.ok()) return ctx.Fail(response.status());
  Render(ctx, FormOf(ctx), *response,
         Renderer<v1::QuarantineRecordsResponse>{RepairToJson, PrintRepair});
  return kExitOk;
}

}  // namespace

void AddDoctorCommands(CLI::App& app, CliContext& ctx, int* exit_code) {
  auto db = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "doctor",
      "Check the daemon, its GPUs, versions and database; each check says "
      "ok or FAIL");
  cmd->add_option("--db", *db,
                  "Also open this database file read-only and run the full "
                  "PRAGMA quick_check (the daemon checks only a bounded part "
                  "of the file when it starts)");
  cmd->callback([&ctx, db, exit_code] { *exit_code = RunDoctor(ctx, *db); });
  app.add_subcommand(
         "repair",
         "Quarantine the stored records that cannot be read (doctor lists "
         "them): one transaction; their values are kept in quarantine tables")
      ->callback([&ctx, exit_code] { *exit_code = RunRepair(ctx); });
}

}  // namespace tunedb::tuner
