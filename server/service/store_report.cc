#include "server/service/store_report.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <limits>
#include <map>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/report_data.h"
#include "common/report_json.h"
#include "common/status_macros.h"
#include "store/fleet/fleet_store.h"

namespace tunedb {
namespace {

// Records between two asks of `cancelled`: gRPC's ServerContext::IsCancelled
// is a futex wait of tens of microseconds, longer than a record's read.
constexpr int64_t kRecordsPerCancelCheck = 4096;

// The aggregate as JSON; FAILED_PRECONDITION over `max_bytes`, naming its
// size and parts, and how to narrow it.
absl::StatusOr<std::string> ReportJson(const ReportData& data,
                                       size_t max_bytes,
                                       absl::string_view narrow) {
  std::string json = ReportDataToJson(data);
  if (json.size() > max_bytes) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the report's aggregate is ", json.size(), " bytes, over the limit of ",
        max_bytes, ": ", data.groups.size(), " GPU model and cuDNN version "
        "pairs, ", data.days.size(), " days, ", data.served_days.size(),
        " served days, ", data.revalidations.size(),
        " revalidations",
        data.fleet.empty() ? ""
                           : absl::StrCat(", ", data.hosts.size(), " hosts"),
        "; ", narrow));
  }
  return json;
}

// The store's answers served by day and by week and program: every row
// its served days keep (a flush drops those over 400 days old), summed by
// day and program in one statement on a read connection.
absl::Status AddServedDays(Store& store, ReportData* data) {
  ASSIGN_OR_RETURN(const std::vector<ServedDayProgram> rows,
                   store.ServedDays(std::numeric_limits<int64_t>::min()));
  SetServedDays(rows, data);
  return absl::OkStatus();
}

// Whether a part of a walk goes on after its `seen` records: asks
// `cancelled` every kRecordsPerCancelCheck of them; once it says so, every
// part stops.
bool GoOn(const std::function<bool()>& cancelled, int64_t& seen,
          std::atomic<bool>& stopped) {
  if (seen++ % kRecordsPerCancelCheck == 0 && cancelled()) stopped = true;
  return !stopped;
}

// A walk's unreadable row, listed in `into`.
std::function<bool(const BadRow&)> UnreadableInto(ReportAggregator& into) {
  return [&into](const BadRow& bad) {
    into.AddUnreadable({bad.id, bad.key_text, bad.reason});
    return true;
  };
}

}  // namespace

absl::StatusOr<std::string> StoreReport(
    Store& store, const ReportArgs& args,
    const std::function<bool()>& cancelled, size_t max_bytes) {
  // One aggregator a part of the walk (Store::ReportWalk: the parts' id
  // ranges read at once), merged in id order; a filter's Query uses the
  // first.
  std::vector<ReportAggregator> aggregators(
      std::max(1u, std::thread::hardware_concurrency()));
  for (ReportAggregator& a : aggregators) {
    if (!args.planned.empty()) a.SetPlannedProblems({}, args.planned);
  }
  ReportAggregator& aggregator = aggregators.front();
  std::atomic<bool> stopped = false;  // asked from any part's thread
  auto part = [&](ReportAggregator& into) {
    return Store::ReportPart{
        [&into, &cancelled, &stopped,
         seen = int64_t{0}](const ReportRecord& r) mutable {
          if (!GoOn(cancelled, seen, stopped)) return false;
          into.Add(r);
          return true;
        },
        UnreadableInto(into)};
  };
  if (args.filter.empty()) {
    // The whole store: the read made for the report, its parts at once.
    std::vector<Store::ReportPart> parts;
    for (ReportAggregator& a : aggregators) parts.push_back(part(a));
    RETURN_IF_ERROR(store.ReportWalk(parts));
    for (size_t i = 1; i < aggregators.size(); ++i) {
      aggregator.Merge(aggregators[i]);
    }
  } else {
    RecordFilter filter = args.filter;
    filter.without_plans = true;
    int64_t seen = 0;
    RETURN_IF_ERROR(store.Query(
        filter, 0, 0,
        [&](const Record& r) {
          if (!GoOn(cancelled, seen, stopped)) return false;
          aggregator.Add(r);
          return true;
        },
        UnreadableInto(aggregator)));
  }
  if (stopped) return absl::CancelledError("the report was cancelled");
  ReportData data = aggregator.Finish();
  if (args.filter.empty()) RETURN_IF_ERROR(AddServedDays(store, &data));
  return ReportJson(data, max_bytes, "narrow it with a filter");
}

absl::StatusOr<std::string> FleetReport(FleetStore* fleet,
                                        const ReportArgs& args,
                                        const std::function<bool()>& cancelled,
                                        size_t max_bytes) {
  if (fleet == nullptr) {
    return absl::FailedPreconditionError(
        "this daemon has no fleet database; start it with --fleet URL "
        "(docs/fleet.md), or ask without --fleet for its own store's report");
  }
  ReportAggregator aggregator;
  if (!args.planned.empty()) aggregator.SetPlannedProblems({}, args.planned);
  std::map<std::string, int64_t> hosts;
  std::atomic<bool> stopped = false;
  int64_t seen = 0;
  RETURN_IF_ERROR(fleet->ReportWalk(
      [&](const std::string& host, const Record& r) {
        if (!GoOn(cancelled, seen, stopped)) return false;
        ++hosts[host];
        aggregator.Add(r);
        return true;
      },
      UnreadableInto(aggregator)));
  if (stopped) return absl::CancelledError("the report was cancelled");
  ReportData data = aggregator.Finish();
  data.fleet = fleet->display();
  for (const auto& [host, records] : hosts) {
    data.hosts.push_back({host, records});
  }
  return ReportJson(data, max_bytes,
                    "ask each daemon for its own store's report instead");
}

}  // namespace tunedb
