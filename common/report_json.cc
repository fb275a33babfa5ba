#include "common/report_json.h"

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace tunedb {

// Each struct's fields by name, both ways (nlohmann's from_json throws
// json::exception naming a missing key or a wrong type).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DeviceGroup, gpu_model, cudnn_version,
                                   records, unsupported, served, saved_ms,
                                   search_ms, revalidated, planned_stored)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DaySaving, day, records, saved_ms)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ServedDay, day, served, saved_ms)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(WeekProgram, week, program, served,
                                   saved_ms)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(WorkspaceUse, gpu_model, cudnn_version,
                                   problem, config, workspace_bytes, ms,
                                   no_workspace_ms, served)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RevalidationChange, gpu_model, from, to,
                                   records, latest_us, compared, changed,
                                   slower)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(UnreadableRow, id, key_text, reason)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(HostRecords, host, records)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ReportData, records, saved_ms, served,
                                   groups, days, ranks, gains, gains_unknown,
                                   revalidations, workspaces, models, planned,
                                   unreadable, unreadable_rows)

namespace {
using json = nlohmann::json;
}  // namespace

std::string ReportDataToJson(const ReportData& data) {
  json j = data;
  j["version"] = kReportJsonVersion;
  // Where the store has counted answers by day: a report without them
  // (a fleet's, a database just migrated) stays what older readers read.
  if (!data.served_days.empty()) {
    j["served_days"] = data.served_days;
    j["week_programs"] = data.week_programs;
  }
  // A fleet's report only: one store's JSON stays what older readers read.
  if (!data.fleet.empty()) {
    j["fleet"] = data.fleet;
    j["hosts"] = data.hosts;
  }
  // Text that is not UTF-8 (a damaged row's key) is replaced, never thrown.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

absl::StatusOr<ReportData> ReportDataFromJson(absl::string_view text) {
  const json j = json::parse(text.begin(), text.end(), nullptr,
                             /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError("report: not a JSON object");
  }
  auto version = j.find("version");
  if (version == j.end() || *version != kReportJsonVersion) {
    return absl::InvalidArgumentError(absl::StrCat(
        "report: version ", version == j.end() ? "missing" : version->dump(),
        ", this build reads version ", kReportJsonVersion));
  }
  try {
    ReportData data = j.get<ReportData>();
    if (j.contains("served_days")) {
      data.served_days = j.at("served_days").get<std::vector<ServedDay>>();
      data.week_programs =
          j.at("week_programs").get<std::vector<WeekProgram>>();
    }
    if (j.contains("fleet")) {
      data.fleet = j.at("fleet").get<std::string>();
      data.hosts = j.at("hosts").get<std::vector<HostRecords>>();
    }
    return data;
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("report: ", e.what()));
  }
}

}  // namespace tunedb
