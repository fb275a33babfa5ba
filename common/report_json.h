// The report's aggregate (ReportData, common/report_data.h) as JSON: what
// the daemon's Report rpc answers (ReportResponse.report_json) and the CLI
// reads back to render the page. One object, "version": 1, with a field
// per ReportData field of the same name (docs/report.md lists them); a
// reader ignores fields it does not know. Its size depends on the number of
// device groups, days, revalidations and listed rows, not on the number of
// records. "served_days" and "week_programs" are written only where the
// store counted answers by day, and read where present.
//
// Thread safety: pure functions.
#ifndef TUNEDB_COMMON_REPORT_JSON_H_
#define TUNEDB_COMMON_REPORT_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/report_data.h"

namespace tunedb {

// The version of the JSON form this build writes and reads.
inline constexpr int kReportJsonVersion = 1;

std::string ReportDataToJson(const ReportData& data);

// INVALID_ARGUMENT naming what is wrong: not JSON, another version, a
// field missing or of the wrong type.
absl::StatusOr<ReportData> ReportDataFromJson(absl::string_view json);

}  // namespace tunedb

#endif  // TUNEDB_COMMON_REPORT_JSON_H_
