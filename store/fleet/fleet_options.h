// FleetOptions: how to reach the fleet database (store/fleet/fleet_database.h
// says how libpq fills in what they leave out).
//
// Thread safety: a plain value.
#ifndef TUNEDB_STORE_FLEET_FLEET_OPTIONS_H_
#define TUNEDB_STORE_FLEET_FLEET_OPTIONS_H_

#include <string>

namespace tunedb {

struct FleetOptions {
  // libpq connection URL or conninfo string; required.
  std::string url;
  // libpq password file (passfile); "" (default): PGPASSFILE or ~/.pgpass.
  std::string password_file;
  // Seconds to wait for a connection where the URL sets no connect_timeout.
  // Default 3.
  int connect_timeout_s = 3;
  // Server-side limit on each statement (statement_timeout), ms. Default
  // 5000.
  int statement_timeout_ms = 5000;
  // Connections kept open for reuse. Default 4.
  int pool_size = 4;
};

}  // namespace tunedb

#endif  // TUNEDB_STORE_FLEET_FLEET_OPTIONS_H_
