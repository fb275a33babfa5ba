#include "server/service/store_report.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/report_data.h"
#include "common/report_json.h"
#include "common/status_macros.h"

namespace tunedb {
namespace {

// Records between two asks of `cancelled`: gRPC's ServerContext::IsCancelled
// is a futex wait of tens of microseconds, longer than a record's read.
constexpr int64_t kRecordsPerCancelCheck = 4096;

}  // namespace

absl::StatusOr<std::string> StoreReport(
    Store& store, const ReportArgs& args,
    const std::function<bool()>& cancelled, size_t max_bytes) {
  ReportAggregator aggregator;
  if (!args.planned.empty()) aggregator.SetPlannedProblems({}, args.planned);
  bool stopped = false;
  int64_t seen = 0;
  // Both ways feed the same aggregator; records are read as they arrive.
  auto add = [&](const auto& r) {
    if (seen++ % kRecordsPerCancelCheck == 0 && cancelled()) {
      stopped = true;
      return false;
    }
    aggregator.Add(r);
    return true;
  };
  auto unreadable = [&](const BadRow& bad) {
    aggregator.AddUnreadable({bad.id, bad.key_text, bad.reason});
    return true;
  };
  if (args.filter.empty()) {
    // The whole store: the read made for the report.
    RETURN_IF_ERROR(store.ReportWalk(
        [&](const ReportRecord& r) { return add(r); }, unreadable));
  } else {
    RecordFilter filter = args.filter;
    filter.without_plans = true;
    RETURN_IF_ERROR(store.Query(
        filter, 0, 0, [&](const Record& r) { return add(r); }, unreadable));
  }
  if (stopped) return absl::CancelledError("the report was cancelled");
  const ReportData data = aggregator.Finish();
  std::string json = ReportDataToJson(data);
  if (json.size() > max_bytes) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the report's aggregate is ", json.size(), " bytes, over the limit of ",
        max_bytes, ": ", data.groups.size(), " GPU model and cuDNN version "
        "pairs, ", data.days.size(), " days, ", data.revalidations.size(),
        " revalidations; narrow it with a filter"));
  }
  return json;
}

}  // namespace tunedb
