// ForEachRecord: reads the records matching a filter through the Query rpc,
// page by page (the id cursor), for query, show and invalidate.
//
// Thread safety: uses the context's stub; call from one thread.
#ifndef TUNEDB_TUNER_RECORD_STREAM_H_
#define TUNEDB_TUNER_RECORD_STREAM_H_

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "tunedb/v1/tunedb.pb.h"
#include "tuner/cli_context.h"

namespace tunedb::cli {

// Calls `visit` for matching records with id > after_id in id order, at most
// `limit` of them (0 = all), until it returns false.
absl::Status ForEachRecord(CliContext& ctx, const v1::Filter& filter,
                           int64_t after_id, int64_t limit,
                           const std::function<bool(const v1::Record&)>& visit);

}  // namespace tunedb::cli

#endif  // TUNEDB_TUNER_RECORD_STREAM_H_
