// FleetDatabase: the connection to the fleet's PostgreSQL database
// (libpqxx over libpq): a small pool of connections, the one conversion of
// libpq/libpqxx errors to absl::Status, and the schema check and forward
// migration at open (store/fleet/fleet_schema.h).
//
// Credentials and TLS are libpq's: the URL or key=value conninfo
// ("postgresql://user:pw@host:5432/db?sslmode=verify-full"), a password file
// (FleetOptions::password_file, else PGPASSFILE or ~/.pgpass), and the PG*
// environment variables (PGHOST, PGUSER, PGPASSWORD, PGSSLMODE, ...) for
// whatever the URL leaves out.
//
// Errors: a refused or lost connection and a connect timeout are
// UNAVAILABLE, rejected credentials UNAUTHENTICATED, a statement past
// statement_timeout_ms DEADLINE_EXCEEDED, a schema newer than this build
// FAILED_PRECONDITION; each message names the database without its password.
//
// Thread safety: all methods are thread-safe; each Run holds one pooled
// connection for its duration.
#ifndef TUNEDB_STORE_FLEET_FLEET_DATABASE_H_
#define TUNEDB_STORE_FLEET_FLEET_DATABASE_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "pqxx/pqxx"
#include "store/fleet/fleet_options.h"

namespace tunedb {

class FleetDatabase {
 public:
  // Connects once (so bad credentials or an unreachable host fail here),
  // then creates or migrates the schema (Create, then EnsureSchema).
  static absl::StatusOr<std::shared_ptr<FleetDatabase>> Open(
      const FleetOptions& options);
  // Checks the URL only; connects and checks the schema at the first Run.
  // A daemon starts so while the database is down.
  static absl::StatusOr<std::shared_ptr<FleetDatabase>> Create(
      const FleetOptions& options);

  // Creates or migrates the schema unless done already; FAILED_PRECONDITION
  // for a schema newer than this build.
  absl::Status EnsureSchema();

  // Runs `fn` in one transaction on a pooled connection and commits; any
  // libpqxx exception becomes a Status (a broken connection is dropped from
  // the pool, the next Run opens a new one).
  absl::Status Run(const std::function<void(pqxx::work&)>& fn)
      ABSL_LOCKS_EXCLUDED(mu_);

  // The database as a person reads it: host, port, database and user, never
  // the password, e.g. "postgresql://tunedb@10.0.0.5:5432/tunedb".
  const std::string& display() const { return display_; }

  // Turns the exception in flight (call inside a catch block) into a Status
  // naming `display`.
  static absl::Status CurrentExceptionStatus(const std::string& display);

 private:
  FleetDatabase(FleetOptions options, std::string conninfo,
                std::string display);
  absl::StatusOr<std::unique_ptr<pqxx::connection>> Connect();
  // A transaction on `connection` (a pooled one; null: none), replacing it
  // with a new connection if it broke while idle.
  absl::StatusOr<std::unique_ptr<pqxx::work>> Begin(
      std::unique_ptr<pqxx::connection>& connection);
  // Run without the schema check.
  absl::Status RunChecked(const std::function<void(pqxx::work&)>& fn)
      ABSL_LOCKS_EXCLUDED(mu_);

  const FleetOptions options_;
  const std::string conninfo_;
  const std::string display_;
  std::atomic<bool> schema_checked_{false};
  absl::Mutex mu_;  // the pool
  std::vector<std::unique_ptr<pqxx::connection>> idle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tunedb

#endif  // TUNEDB_STORE_FLEET_FLEET_DATABASE_H_
