// ForEachRecord: reads the records matching a filter through the Query rpc,
// page by page (the id cursor), for query, show and invalidate; and
// ReportSkipped, how query and export tell of stored rows they skipped.
//
// Thread safety: uses the context's stub; call from one thread.
#ifndef TUNEDB_TUNER_RECORD_STREAM_H_
#define TUNEDB_TUNER_RECORD_STREAM_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tunedb/record.h"
#include "tunedb/v1/tunedb.pb.h"
#include "tuner/cli_context.h"

namespace tunedb::tuner {

// Calls `visit` for matching records with id > after_id in id order, at most
// `limit` of them (0 = all), until it returns false. A stored row that
// cannot be read fails the walk with DATA_LOSS naming it, unless `bad_row` is
// set: then it goes there instead (counted towards `limit`) and the walk goes
// on while it returns true.
absl::Status ForEachRecord(
    CliContext& ctx, const v1::Filter& filter, int64_t after_id, int64_t limit,
    const std::function<bool(const v1::Record&)>& visit,
    const std::function<bool(const v1::BadRow&)>& bad_row = nullptr);

// ForEachRecord with each record converted: `visit` gets it as a Record.
// A record the daemon sent malformed stops the walk with INTERNAL naming
// it; a stored row that cannot be read goes to `skipped` (null: it fails
// the walk, as ForEachRecord's).
absl::Status ForEachParsedRecord(CliContext& ctx, const v1::Filter& filter,
                                 int64_t limit,
                                 const std::function<bool(Record)>& visit,
                                 std::vector<v1::BadRow>* skipped = nullptr);

// Every record matching `filter`, read with ForEachParsedRecord;
// the first error (a row or a record that cannot be read) otherwise.
absl::StatusOr<std::vector<Record>> RecordsMatching(CliContext& ctx,
                                                    const v1::Filter& filter);

// Prints each skipped row ("tunedb: record 17 cannot be read: ...") and a
// summary on stderr; nothing when `skipped` is empty.
void ReportSkipped(CliContext& ctx, const std::vector<v1::BadRow>& skipped);

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_RECORD_STREAM_H_
