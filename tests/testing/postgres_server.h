// PostgresServer: a real PostgreSQL server for one test suite, made with
// initdb (once per user, then copied) in a temporary folder and run with pg_ctl on a free TCP port of
// 127.0.0.1, with password (SCRAM) authentication for the user "tunedb".
// PostgreSQL refuses to run as root, so where the tests run as root (CI) its
// programs run as the user "nobody" (setpriv), with the cluster's folder
// given to that user. Available() says why a suite must skip: only where no
// PostgreSQL server programs are installed.
//
// Thread safety: owned by one test thread.
#ifndef TUNEDB_TESTS_TESTING_POSTGRES_SERVER_H_
#define TUNEDB_TESTS_TESTING_POSTGRES_SERVER_H_

#include <string>

namespace tunedb::testing_util {

class PostgresServer {
 public:
  // The password of the user "tunedb".
  static constexpr const char* kPassword = "fleet-test-password";

  // The folder of initdb/pg_ctl/postgres, or "" where none is installed
  // (then `why` says what was looked for).
  static std::string BinDir(std::string* why);

  // Creates the cluster under `dir` (which must exist); Start() runs it.
  explicit PostgresServer(const std::string& dir);
  ~PostgresServer();  // stops the server (immediate mode)

  // initdb (the first time) and pg_ctl start, waiting until it accepts
  // connections. False with `error` set on failure (where no server is
  // installed, it says what BinDir looked for).
  bool Start(std::string* error);
  // pg_ctl stop: "fast" (clean) or "immediate" (as a crash).
  bool Stop(const std::string& mode = "fast");
  bool running() const { return running_; }

  int port() const { return port_; }
  // postgresql://tunedb:PASSWORD@127.0.0.1:PORT/DB
  std::string Url(const std::string& db,
                  const std::string& password = kPassword) const;
  // Creates a fresh database and returns its URL.
  std::string CreateDatabase(const std::string& name);
  // Runs `sql` with psql on `db` and returns its unaligned output (rows on
  // lines, columns split by '|'), trimmed; "ERROR: ..." on failure.
  std::string Sql(const std::string& db, const std::string& sql) const;

 private:
  // Runs a PostgreSQL program (as nobody when root); returns its exit
  // status, its output in `output`.
  int RunAsOwner(const std::string& command, std::string* output) const;
  // The initdb'd data folder that Start copies (made once per user and
  // PostgreSQL build under /tmp, under a file lock).
  bool Template(std::string* data, std::string* error) const;

  std::string bin_;
  std::string dir_;
  std::string data_;
  int port_ = 0;
  bool initialized_ = false;
  bool running_ = false;
};

}  // namespace tunedb::testing_util

#endif  // TUNEDB_TESTS_TESTING_POSTGRES_SERVER_H_
