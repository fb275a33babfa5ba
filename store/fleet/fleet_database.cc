#include "store/fleet/fleet_database.h"

#include <libpq-fe.h>

#include <exception>
#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "store/fleet/fleet_schema.h"

namespace tunedb {
namespace {

// libpq's connection parameters of `url` (URL or key=value form), set ones
// only. INVALID_ARGUMENT with libpq's reason for a malformed one.
absl::StatusOr<std::map<std::string, std::string>> ParseConninfo(
    const std::string& url) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(url.c_str(), &error);
  if (options == nullptr) {
    std::string reason = error != nullptr ? error : "out of memory";
    PQfreemem(error);
    return absl::InvalidArgumentError(absl::StrCat(
        "bad fleet database URL: ",
        absl::StripTrailingAsciiWhitespace(reason)));
  }
  std::map<std::string, std::string> set;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (o->val != nullptr && o->val[0] != '\0') set[o->keyword] = o->val;
  }
  PQconninfoFree(options);
  return set;
}

// One conninfo value, quoted as libpq reads it.
std::string Quote(const std::string& value) {
  return absl::StrCat(
      "'", absl::StrReplaceAll(value, {{"\\", "\\\\"}, {"'", "\\'"}}), "'");
}

// "postgresql://user@host:port/db" from the parameters (libpq's defaults
// and environment fill what is unset when connecting; shown as given).
std::string Display(const std::map<std::string, std::string>& set) {
  auto get = [&](const char* key) {
    auto it = set.find(key);
    return it == set.end() ? std::string() : it->second;
  };
  std::string out = "postgresql://";
  if (!get("user").empty()) absl::StrAppend(&out, get("user"), "@");
  absl::StrAppend(&out, get("host").empty() ? get("hostaddr") : get("host"));
  if (!get("port").empty()) absl::StrAppend(&out, ":", get("port"));
  absl::StrAppend(&out, "/", get("dbname"));
  return out;
}

bool IsAuthFailure(absl::string_view message) {
  return absl::StrContains(message, "password authentication failed") ||
         absl::StrContains(message, "no password supplied") ||
         absl::StrContains(message, "authentication failed") ||
         absl::StrContains(message, "role \"") ||
         absl::StrContains(message, "pg_hba.conf");
}

std::string Clean(const char* what) {
  return std::string(absl::StripTrailingAsciiWhitespace(
      absl::StrReplaceAll(what, {{";\n", "; "}, {"\n\t", " "}, {"\n", "; "}})));
}

}  // namespace

absl::Status FleetDatabase::CurrentExceptionStatus(const std::string& display) {
  try {
    throw;
  } catch (const pqxx::broken_connection& e) {
    const std::string what = Clean(e.what());
    if (IsAuthFailure(what)) {
      return absl::UnauthenticatedError(absl::StrCat(
          "fleet database ", display, " refused the credentials: ", what));
    }
    return absl::UnavailableError(
        absl::StrCat("fleet database ", display, " unreachable: ", what));
  } catch (const pqxx::sql_error& e) {
    const std::string state = e.sqlstate();
    const std::string what = Clean(e.what());
    if (state == "57014") {
      return absl::DeadlineExceededError(absl::StrCat(
          "fleet database ", display, ": statement timed out: ", what));
    }
    if (absl::StartsWith(state, "28")) {
      return absl::UnauthenticatedError(absl::StrCat(
          "fleet database ", display, " refused the credentials: ", what));
    }
    if (absl::StartsWith(state, "08") || absl::StartsWith(state, "57P")) {
      return absl::UnavailableError(
          absl::StrCat("fleet database ", display, " unreachable: ", what));
    }
    return absl::InternalError(absl::StrCat("fleet database ", display,
                                            ": SQL error ", state, ": ", what));
  } catch (const pqxx::in_doubt_error& e) {
    return absl::UnavailableError(
        absl::StrCat("fleet database ", display,
                     ": connection lost during commit: ", Clean(e.what())));
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat("fleet database ", display, ": ", Clean(e.what())));
  }
}

absl::StatusOr<std::shared_ptr<FleetDatabase>> FleetDatabase::Open(
    const FleetOptions& options) {
  ASSIGN_OR_RETURN(std::shared_ptr<FleetDatabase> db, Create(options));
  RETURN_IF_ERROR(db->EnsureSchema());
  return db;
}

absl::StatusOr<std::shared_ptr<FleetDatabase>> FleetDatabase::Create(
    const FleetOptions& options) {
  if (options.url.empty()) {
    return absl::InvalidArgumentError("the fleet database URL is empty");
  }
  ASSIGN_OR_RETURN(auto set, ParseConninfo(options.url));
  if (!options.password_file.empty()) set["passfile"] = options.password_file;
  if (set.count("connect_timeout") == 0) {
    set["connect_timeout"] = std::to_string(options.connect_timeout_s);
  }
  if (set.count("application_name") == 0) set["application_name"] = "tunedb";
  std::vector<std::string> parts;
  for (const auto& [key, value] : set) {
    parts.push_back(absl::StrCat(key, "=", Quote(value)));
  }
  return std::shared_ptr<FleetDatabase>(new FleetDatabase(
      options, absl::StrJoin(parts, " "), Display(set)));
}

absl::Status FleetDatabase::EnsureSchema() {
  if (schema_checked_.load()) return absl::OkStatus();
  int found = 0;
  RETURN_IF_ERROR(RunChecked(
      [&](pqxx::work& txn) { found = CreateOrMigrateFleetSchema(txn); }));
  if (found > kFleetSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "fleet database ", display_, " has tunedb fleet schema version ",
        found, ", newer than the newest this build understands (",
        kFleetSchemaVersion, "); upgrade tunedb on this host"));
  }
  schema_checked_.store(true);
  return absl::OkStatus();
}

FleetDatabase::FleetDatabase(FleetOptions options, std::string conninfo,
                             std::string display)
    : options_(std::move(options)),
      conninfo_(std::move(conninfo)),
      display_(std::move(display)) {}

absl::StatusOr<std::unique_ptr<pqxx::connection>> FleetDatabase::Connect() {
  try {
    auto connection = std::make_unique<pqxx::connection>(conninfo_);
    pqxx::nontransaction setup(*connection);
    setup.exec("SET statement_timeout = " +
               std::to_string(options_.statement_timeout_ms));
    setup.commit();
    return connection;
  } catch (...) {
    return CurrentExceptionStatus(display_);
  }
}

absl::Status FleetDatabase::Run(const std::function<void(pqxx::work&)>& fn) {
  RETURN_IF_ERROR(EnsureSchema());
  return RunChecked(fn);
}

absl::StatusOr<std::unique_ptr<pqxx::work>> FleetDatabase::Begin(
    std::unique_ptr<pqxx::connection>& connection) {
  // A pooled connection whose server went away fails as the transaction
  // starts, with libpq's view of it ("not connected"), not the cause:
  // that one is dropped and a new connection says what is wrong.
  if (connection != nullptr) {
    try {
      return std::make_unique<pqxx::work>(*connection);
    } catch (const pqxx::broken_connection&) {
      connection.reset();
    } catch (...) {
      return CurrentExceptionStatus(display_);
    }
  }
  ASSIGN_OR_RETURN(connection, Connect());
  try {
    return std::make_unique<pqxx::work>(*connection);
  } catch (...) {
    return CurrentExceptionStatus(display_);
  }
}

absl::Status FleetDatabase::RunChecked(
    const std::function<void(pqxx::work&)>& fn) {
  std::unique_ptr<pqxx::connection> connection;
  {
    absl::MutexLock lock(&mu_);
    if (!idle_.empty()) {
      connection = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  ASSIGN_OR_RETURN(std::unique_ptr<pqxx::work> txn, Begin(connection));
  absl::Status status;
  try {
    fn(*txn);
    txn->commit();
  } catch (...) {
    status = CurrentExceptionStatus(display_);
  }
  txn.reset();
  // A connection that broke (or whose state is unknown after an error
  // outside SQL) is dropped; one that met an SQL error is still usable.
  const bool keep = connection->is_open() &&
                    (status.ok() || absl::IsInternal(status) ||
                     absl::IsDeadlineExceeded(status));
  if (keep) {
    absl::MutexLock lock(&mu_);
    if (static_cast<int>(idle_.size()) < options_.pool_size) {
      idle_.push_back(std::move(connection));
    }
  }
  return status;
}

}  // namespace tunedb
