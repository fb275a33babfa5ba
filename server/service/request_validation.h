// The validation of every request TuneDbService takes, as plain functions
// from a wire message to the domain values the service then runs on (or
// INVALID_ARGUMENT naming the field at fault). The service calls these and
// nothing else to check its input; the request fuzzer (tests/fuzz/) calls
// the same functions on arbitrary bytes.
//
// Thread safety: stateless functions.
#ifndef TUNEDB_SERVER_SERVICE_REQUEST_VALIDATION_H_
#define TUNEDB_SERVER_SERVICE_REQUEST_VALIDATION_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/valid_key.h"
#include "server/tuning/tune_mode.h"
#include "store/store.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"
#include "tunedb/v1/tunedb.pb.h"

namespace tunedb {

// A Lookup: the whole key (both halves required) and the constraints; the
// job and the program under the job id's rule (common/job_id.h).
struct LookupArgs {
  ValidKey key;
  Constraints constraints;
  std::string job;      // "" for none
  std::string program;  // "" for none
};
absl::StatusOr<LookupArgs> ValidateLookup(const v1::LookupRequest& request);

// A Warm: the program (required) and the device (required, validated as
// Lookup's), the job as Lookup's, max_keys >= 0.
struct WarmArgs {
  std::string program;
  DeviceKey device;
  std::string job;  // "" for none
  int64_t max_keys = 0;
};
absl::StatusOr<WarmArgs> ValidateWarm(const v1::WarmRequest& request);

// A Tune (also each item of a TuneBatch): the problem, the device if given
// (unset means the first device), the constraints and how to search;
// revalidate_from_cudnn must not be negative, and revalidate_older_driver
// goes with neither force nor revalidate_from_cudnn.
struct TuneArgs {
  ConvProblem problem;
  std::optional<DeviceKey> device;
  Constraints constraints;
  TuneMode mode;
};
absl::StatusOr<TuneArgs> ValidateTune(const v1::TuneRequest& request);

// A filter of Query, Invalidate or Export: at most kMaxFilterFields fields,
// names of at most kMaxFilterNameBytes and values of at most
// kMaxFilterValueBytes (checked before anything else), known field names, a
// well-formed hash, times >= 0.
absl::StatusOr<RecordFilter> ValidateFilter(const v1::Filter& filter);

// A Query: its filter, the id to start after and the page size (1000 when
// the request leaves it 0).
struct QueryArgs {
  RecordFilter filter;
  int64_t after_id = 0;
  int limit = 0;
};
absl::StatusOr<QueryArgs> ValidateQuery(const v1::QueryRequest& request);

// An Invalidate: a filter or `all`, exactly one of them.
absl::StatusOr<RecordFilter> ValidateInvalidate(
    const v1::InvalidateRequest& request);

// An Export: its filter.
absl::StatusOr<RecordFilter> ValidateExport(const v1::ExportRequest& request);

// A Report: its filter (as Query's), and at most kMaxReportPlannedProblems
// planned problems, each a problem's key text without its device of at most
// kMaxPlannedProblemBytes (INVALID_ARGUMENT naming the entry, e.g.
// "planned_problems[3]: ..."). A fleet report takes no filter
// (INVALID_ARGUMENT naming both).
struct ReportArgs {
  RecordFilter filter;
  std::vector<ConvProblem> planned;
  bool fleet = false;  // every host's records in the fleet database
};
absl::StatusOr<ReportArgs> ValidateReport(const v1::ReportRequest& request);

// What the first line of an Import announces: the stream's length, not
// negative (INVALID_ARGUMENT) and at most `max_lines` (RESOURCE_EXHAUSTED),
// and the import's id, empty or valid as ValidateImportId says.
struct ImportHeader {
  int64_t expected_lines = 0;
  std::string import_id;
};
absl::StatusOr<ImportHeader> ValidateImportHeader(const v1::ImportLine& first,
                                                  int64_t max_lines);

// An import id: 1 to kMaxImportIdBytes of [A-Za-z0-9_-].
absl::Status ValidateImportId(const std::string& id);

// One line of an Import: at most kMaxImportLineBytes of UTF-8, and its
// record (RecordFromJson, store/record_json.h).
absl::StatusOr<Record> ValidateImportLine(const v1::ImportLine& line);

// An ImportStatus: its import id.
absl::Status ValidateImportStatus(const v1::ImportStatusRequest& request);

// A ReportCounters: source and names [a-z0-9_]{1,32}, counts >= 0, at most
// kMaxReportedCounts entries; the counts keyed "source.name".
inline constexpr int kMaxReportedCounts = 64;
absl::StatusOr<std::map<std::string, int64_t>> ValidateReportCounters(
    const v1::ReportCountersRequest& request);

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SERVICE_REQUEST_VALIDATION_H_
