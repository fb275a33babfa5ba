// Opening a store's SQLite connections: the one place the database file is
// opened for writing (and created, and its schema created or migrated) and
// the one place its read connections are opened. Every error names the file
// and says that opening failed.
//
// Internal to tunedb_store. Thread safety: free functions; the connections
// they return belong to the caller.
#ifndef TUNEDB_STORE_CONNECTIONS_H_
#define TUNEDB_STORE_CONNECTIONS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "store/env.h"
#include "store/sql/connection_pool.h"
#include "store/sql/database.h"
#include "store/store.h"

namespace tunedb {

// The write connection of `options.path`: checks that the file system lets
// it be written (CheckWritable), opens it (creating the file), checks its
// identity and the bounded file check before anything is written, switches
// to WAL (not for ":memory:"), sets synchronous and the journal size limit,
// and creates or migrates the schema where it is older than this build's.
absl::StatusOr<std::unique_ptr<sql::Database>> OpenWriter(
    Env& env, const Store::Options& options);

// The read-only connections: options.read_connections of them (none for
// ":memory:"), at least one for a read-only store, which also checks the
// file on its first one (a current tunedb database that passes the bounded
// check). Null where there are none.
absl::StatusOr<std::unique_ptr<sql::ConnectionPool>> OpenReaders(
    Env& env, const Store::Options& options);

}  // namespace tunedb

#endif  // TUNEDB_STORE_CONNECTIONS_H_
