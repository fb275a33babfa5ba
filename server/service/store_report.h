// StoreReport: the Report rpc's answer, aggregated next to the store. The
// records a filter selects are walked with the store's Query (a read
// connection of its pool, a batch at a time: never the write lock, so
// Lookups, Tunes and imports go on meanwhile), read without their plans
// (the report reads none), into a ReportAggregator (common/report_data.h);
// the whole store with its ReportWalk, in parts read at once (a read
// connection and a thread each), their aggregators merged in id order;
// an unfiltered report adds the store's answers served by day and by week
// and program (Store::ServedDays, SetServedDays); the answer is the
// aggregate's JSON (common/report_json.h). No record is
// converted to a wire message. FleetReport is its fleet branch: every
// host's records in the fleet's PostgreSQL, into the same aggregator.
//
// Thread safety: functions; safe to call from several threads at once
// (the store and the fleet store are thread-safe).
#ifndef TUNEDB_SERVER_SERVICE_STORE_REPORT_H_
#define TUNEDB_SERVER_SERVICE_STORE_REPORT_H_

#include <cstddef>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "proto/wire_limits.h"
#include "server/service/request_validation.h"
#include "store/store.h"

namespace tunedb {

class FleetStore;

// The aggregate of the records `args` selects, as JSON. An unreadable row
// is skipped and listed in the aggregate (ReportData::unreadable), never a
// failure. CANCELLED once `cancelled` returns true (asked before the first
// record and every few thousand after); FAILED_PRECONDITION, naming its size and parts, for an
// aggregate over `max_bytes` (a filter narrows it); the store's error
// otherwise.
absl::StatusOr<std::string> StoreReport(
    Store& store, const ReportArgs& args,
    const std::function<bool()>& cancelled,
    size_t max_bytes = kMaxReportJsonBytes);

// The fleet's report (ReportArgs::fleet): every host's records in the
// fleet database, read in batches (FleetStore::ReportWalk) into the same
// aggregator, with the database (without its password) and each host's
// record count (ReportData::fleet, hosts). FAILED_PRECONDITION where
// `fleet` is null (a daemon without a fleet database); the fleet's error
// otherwise (UNAVAILABLE naming it where unreachable: this request fails,
// nothing else); CANCELLED and the size limit as StoreReport.
absl::StatusOr<std::string> FleetReport(
    FleetStore* fleet, const ReportArgs& args,
    const std::function<bool()>& cancelled,
    size_t max_bytes = kMaxReportJsonBytes);

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SERVICE_STORE_REPORT_H_
