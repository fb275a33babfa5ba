// ValidateClientOptions: whether ClientOptions are ones a Client can be
// created with (Client::Create's check, before it opens anything): an
// address, a cache capacity >= 0, positive deadlines (lookup_deadline may
// be 0), TTLs >= 0, 0 < reconnect_backoff_min <= reconnect_backoff_max, a
// background queue of at least one job, and a valid job id and program
// name. The pin's mode and path are checked where the pin is opened
// (PinnedAnswers).
//
// Thread safety: a pure function.
#ifndef TUNEDB_CLIENT_VALIDATE_CLIENT_OPTIONS_H_
#define TUNEDB_CLIENT_VALIDATE_CLIENT_OPTIONS_H_

#include "absl/status/status.h"
#include "tunedb/client_options.h"

namespace tunedb {

// OK, or INVALID_ARGUMENT naming the first field that is wrong.
absl::Status ValidateClientOptions(const ClientOptions& options);

}  // namespace tunedb

#endif  // TUNEDB_CLIENT_VALIDATE_CLIENT_OPTIONS_H_
