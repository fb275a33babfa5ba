// `tunedb doctor`: checks that the daemon is reachable, sees GPUs, runs a
// compatible version, answers lookups, and that its database is intact
// (through Stats, every stored record read back through CheckRecords, and
// with --db by a local read-only PRAGMA quick_check of the whole file: the
// daemon's own check at start-up is bounded); `tunedb repair`: quarantines
// the records that cannot be read (QuarantineRecords).
#include <sqlite3.h>

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "proto/convert.h"
#include "proto/grpc_status.h"
#include "tunedb/version.h"
#include "tuner/commands.h"
#include "tuner/exit_codes.h"
#include "tuner/format.h"
#include "tuner/table.h"

namespace tunedb::tuner {
namespace {

struct Check {
  std::string name;
  bool ok = false;
  std::string detail;
};

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
Check CheckRecordRows(CliContext& ctx, v1::TuneDb::Stub* stub,
                      nlohmann::json* bad_rows) {
  Check c{"stored records readable", false, ""};
  v1::CheckRecordsResponse response;
  // Reading every record takes longer than one lookup: no deadline.
  auto context = ctx.NewStreamContext();
  absl::Status s = FromGrpcStatus(
      stub->CheckRecords(context.get(), v1::CheckRecordsRequest(), &response));
  if (!s.ok()) {
    c.detail = std::string(s.message());
    return c;
  }
  for (const v1::BadRow& bad : response.bad_rows()) {
    bad_rows->push_back({{"id", bad.id()},
                         {"key_text", bad.key_text()},
                         {"reason", bad.reason()}});
  }
  c.ok = response.bad_rows().empty();
  c.detail = c.ok ? absl::StrCat(response.checked(), " records read back")
                  : absl::StrCat(response.bad_rows_size(), " of ",
                                 response.checked(), " cannot be read: ",
                                 DescribeBadRows(response.bad_rows()),
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

int RunDoctor(CliContext& ctx, const std::string& db_path) {
  std::vector<Check> checks;
  nlohmann::json bad_rows = nlohmann::json::array();
  bool unreachable = false;
  auto stub = ctx.Stub();
  checks.push_back({"daemon reachable", stub.ok(),
                    stub.ok() ? ctx.options().address
                              : std::string(stub.status().message())});
  if (stub.ok()) {
    v1::StatsResponse stats;
    auto c1 = ctx.NewContext();
    absl::Status s =
        FromGrpcStatus((*stub)->Stats(c1.get(), v1::StatsRequest(), &stats));
    const std::string cli_version = TUNEDB_VERSION_STRING;
    if (s.ok()) {
      const std::string daemon_major =
          stats.version().substr(0, stats.version().find('.'));
      const std::string cli_major =
          cli_version.substr(0, cli_version.find('.'));
      checks.push_back({"versions", daemon_major == cli_major,
                        absl::StrCat("tunedbd ", stats.version(), ", tunedb ",
                                     cli_version, ", finder ", stats.finder(),
                                     stats.finder() == "simulated"
                                         ? " (test double, not GPU timings)"
                                         : "")});
      checks.push_back(
          {"database (via daemon)", true,
           absl::StrCat(stats.database_path(), ": ", stats.records(),
                        " records, ", FormatBytes(stats.database_bytes()))});
      checks.push_back(CheckRecordRows(ctx, *stub, &bad_rows));
      if (stats.has_fleet()) {
        const v1::FleetStats& f = stats.fleet();
        checks.push_back(
            {"fleet database", f.connected(),
             absl::StrCat(f.database(),
                          f.connected() ? ": connected" : ": NOT connected",
                          f.last_error().empty()
                              ? ""
                              : absl::StrCat(" (last error: ", f.last_error(),
                                             ")"),
                          ", outbox ", f.outbox(), " waiting")});
      }
    } else {
      checks.push_back({"versions", false, std::string(s.message())});
    }
    v1::DevicesResponse devices;
    auto c2 = ctx.NewContext();
    s = FromGrpcStatus(
        (*stub)->Devices(c2.get(), v1::DevicesRequest(), &devices));
    std::vector<std::string> names;
    bool healthy = s.ok() && devices.devices_size() > 0;
    for (const v1::DeviceInfo& d : devices.devices()) {
      names.push_back(absl::StrCat(d.ordinal(), ": ", d.key().gpu_model(),
                                   " cuDNN ",
                                   CudnnVersionText(d.key().cudnn_version()),
                                   d.healthy() ? "" : " (worker DOWN)"));
      healthy = healthy && d.healthy();
    }
    checks.push_back({"GPUs visible", healthy,
                      !s.ok()         ? std::string(s.message())
                      : names.empty() ? "the daemon serves no GPU"
                                      : absl::StrJoin(names, "; ")});
    if (devices.devices_size() > 0) {
      // A lookup of a tiny problem exercises the read path end to end;
      // NOT_FOUND is a correct answer.
      v1::LookupRequest request;
      *request.mutable_device() = devices.devices(0).key();
      ConvProblem probe;
      probe.n = probe.c = probe.k = 1;
      probe.input = {1, 1, 0};
      probe.filter = {1, 1, 0};
      probe.stride = {1, 1, 0};
      probe.dilation = {1, 1, 0};
      ToProto(probe, request.mutable_problem());
      v1::LookupResponse response;
      auto c3 = ctx.NewContext();
      grpc::Status g = (*stub)->Lookup(c3.get(), request, &response);
      const bool ok = g.ok() || g.error_code() == grpc::StatusCode::NOT_FOUND;
      checks.push_back(
          {"lookup round trip", ok, ok ? "answered" : g.error_message()});
    }
  } else {
    unreachable = true;
  }
  if (!db_path.empty()) checks.push_back(QuickCheckFile(db_path));

  bool all_ok = true;
  for (const Check& c : checks) all_ok = all_ok && c.ok;
  if (ctx.json()) {
    nlohmann::json j = nlohmann::json::array();
    for (const Check& c : checks) {
      j.push_back({{"check", c.name}, {"ok", c.ok}, {"detail", c.detail}});
    }
    ctx.out() << nlohmann::json(
                     {{"ok", all_ok}, {"checks", j}, {"bad_rows", bad_rows}})
                     .dump(2)
              << "\n";
  } else {
    Table t({"check", "result", "detail"});
    for (const Check& c : checks)
      t.AddRow({c.name, c.ok ? "ok" : "FAIL", c.detail});
    t.Print(ctx.out());
  }
  if (unreachable) return kExitUnreachable;
  return all_ok ? kExitOk : kExitError;
}

int RunRepair(CliContext& ctx) {
  auto stub = ctx.Stub();
  if (!stub.ok()) return ctx.Fail(stub.status());
  v1::QuarantineRecordsResponse response;
  auto context = ctx.NewStreamContext();
  absl::Status s = FromGrpcStatus((*stub)->QuarantineRecords(
      context.get(), v1::QuarantineRecordsRequest(), &response));
  if (!s.ok()) return ctx.Fail(s);
  if (ctx.json()) {
    nlohmann::json moved = nlohmann::json::array();
    for (const v1::BadRow& bad : response.quarantined()) {
      moved.push_back({{"id", bad.id()},
                       {"key_text", bad.key_text()},
                       {"reason", bad.reason()}});
    }
    ctx.out() << nlohmann::json({{"quarantined", moved}}).dump(2) << "\n";
  } else if (response.quarantined().empty()) {
    ctx.out() << "every stored record reads back; nothing to repair\n";
  } else {
    ctx.out() << "quarantined " << response.quarantined_size()
              << " unreadable record(s): "
              << DescribeBadRows(response.quarantined())
              << "\n(their stored values are kept in the tables "
                 "quarantined_records and quarantined_results)\n";
  }
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
