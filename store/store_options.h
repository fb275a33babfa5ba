// The checks on Store::Options that come before anything is opened.
//
// Thread safety: a pure function.
#ifndef TUNEDB_STORE_STORE_OPTIONS_H_
#define TUNEDB_STORE_STORE_OPTIONS_H_

#include "absl/status/status.h"
#include "store/store.h"

namespace tunedb {

// INVALID_ARGUMENT naming the option where `options` cannot be used: an
// empty path, a synchronous other than FULL, NORMAL or EXTRA (any case), a
// negative busy_timeout_ms or read_connections, or a read-only ":memory:".
absl::Status ValidateStoreOptions(const Store::Options& options);

}  // namespace tunedb

#endif  // TUNEDB_STORE_STORE_OPTIONS_H_
