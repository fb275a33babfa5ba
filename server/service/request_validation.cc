#include "server/service/request_validation.h"

#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/job_id.h"
#include "common/status_macros.h"
#include "common/utf8.h"
#include "proto/convert.h"
#include "proto/wire_limits.h"
#include "store/record_json.h"

namespace tunedb {
namespace {

// INVALID_ARGUMENT when `value` is over `max` bytes; the message gives the
// sizes and never the value.
absl::Status CheckLength(absl::string_view what, absl::string_view value,
                         size_t max) {
  if (value.size() <= max) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      what, ": ", value.size(), " bytes, at most ", max, " allowed"));
}

}  // namespace

absl::StatusOr<LookupArgs> ValidateLookup(const v1::LookupRequest& request) {
  if (!request.has_problem()) {
    return absl::InvalidArgumentError("problem: required");
  }
  if (!request.has_device()) {
    return absl::InvalidArgumentError("device: required for Lookup");
  }
  // FromProto validates each half: the key is checked here, once.
  ProblemKey key;
  ASSIGN_OR_RETURN(key.problem, FromProto(request.problem()));
  ASSIGN_OR_RETURN(key.device, FromProto(request.device()));
  ASSIGN_OR_RETURN(Constraints constraints, FromProto(request.constraints()));
  RETURN_IF_ERROR(ValidateJobId(request.job()));
  RETURN_IF_ERROR(ValidateProgramName(request.program()));
  return LookupArgs{ValidKey::FromValidated(std::move(key)), constraints,
                    request.job(), request.program()};
}

absl::StatusOr<WarmArgs> ValidateWarm(const v1::WarmRequest& request) {
  if (request.program().empty()) {
    return absl::InvalidArgumentError("program: required for Warm");
  }
  RETURN_IF_ERROR(ValidateProgramName(request.program()));
  if (!request.has_device()) {
    return absl::InvalidArgumentError("device: required for Warm");
  }
  WarmArgs args;
  ASSIGN_OR_RETURN(args.device, FromProto(request.device()));
  RETURN_IF_ERROR(ValidateJobId(request.job()));
  if (request.max_keys() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_keys: ", request.max_keys(), " is negative (0 means all)"));
  }
  args.program = request.program();
  args.job = request.job();
  args.max_keys = request.max_keys();
  return args;
}

absl::StatusOr<TuneArgs> ValidateTune(const v1::TuneRequest& request) {
  if (!request.has_problem()) {
    return absl::InvalidArgumentError("problem: required");
  }
  TuneArgs args;
  ASSIGN_OR_RETURN(args.problem, FromProto(request.problem()));
  if (request.has_device()) {
    ASSIGN_OR_RETURN(args.device, FromProto(request.device()));
  }
  ASSIGN_OR_RETURN(args.constraints, FromProto(request.constraints()));
  args.mode.force = request.force();
  args.mode.when =
      request.when_idle() ? SearchWhen::kWhenIdle : SearchWhen::kNow;
  if (request.revalidate_from_cudnn() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("revalidate_from_cudnn: ", request.revalidate_from_cudnn(),
                     " is not a cuDNN version"));
  }
  args.mode.revalidate_from_cudnn = request.revalidate_from_cudnn();
  args.mode.revalidate_older_driver = request.revalidate_older_driver();
  RETURN_IF_ERROR(CheckRevalidateOlderDriver(args.mode));
  if (request.return_if_held() && !request.when_idle()) {
    return absl::InvalidArgumentError(
        "return_if_held: only with when_idle (nothing else is held back)");
  }
  args.mode.return_if_held = request.return_if_held();
  return args;
}

absl::StatusOr<RecordFilter> ValidateFilter(const v1::Filter& in) {
  if (in.fields_size() > kMaxFilterFields) {
    return absl::InvalidArgumentError(absl::StrCat(
        "filter: at most ", kMaxFilterFields, " fields, got ",
        in.fields_size()));
  }
  RecordFilter f;
  for (const auto& [name, value] : in.fields()) {
    RETURN_IF_ERROR(CheckLength("filter field name", name, kMaxFilterNameBytes));
    RETURN_IF_ERROR(CheckLength(absl::StrCat("filter field ", name), value,
                                kMaxFilterValueBytes));
    f.fields[name] = value;
  }
  f.since_us = in.since_us();
  f.until_us = in.until_us();
  if (f.since_us < 0 || f.until_us < 0) {
    return absl::InvalidArgumentError("filter: times must be >= 0");
  }
  absl::Status s = f.Validate();
  if (!s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("filter: ", s.message()));
  }
  return f;
}

absl::StatusOr<QueryArgs> ValidateQuery(const v1::QueryRequest& request) {
  QueryArgs args;
  ASSIGN_OR_RETURN(args.filter, ValidateFilter(request.filter()));
  if (request.page_size() < 0 || request.after_id() < 0) {
    return absl::InvalidArgumentError("page_size and after_id must be >= 0");
  }
  args.after_id = request.after_id();
  args.limit = request.page_size() == 0 ? 1000 : request.page_size();
  return args;
}

absl::StatusOr<RecordFilter> ValidateInvalidate(
    const v1::InvalidateRequest& request) {
  ASSIGN_OR_RETURN(RecordFilter filter, ValidateFilter(request.filter()));
  if (filter.empty() && !request.all()) {
    return absl::InvalidArgumentError(
        "filter: empty; set 'all' to delete every record");
  }
  if (!filter.empty() && request.all()) {
    return absl::InvalidArgumentError(
        "filter: give a filter or 'all', not both");
  }
  return filter;
}

absl::StatusOr<RecordFilter> ValidateExport(const v1::ExportRequest& request) {
  return ValidateFilter(request.filter());
}

absl::StatusOr<ReportArgs> ValidateReport(const v1::ReportRequest& request) {
  ReportArgs args;
  ASSIGN_OR_RETURN(args.filter, ValidateFilter(request.filter()));
  args.fleet = request.fleet();
  if (args.fleet && !args.filter.empty()) {
    return absl::InvalidArgumentError(
        "filter: a fleet report reads every record; it takes no filter");
  }
  const int count = request.planned_problems_size();
  if (count > kMaxReportPlannedProblems) {
    return absl::InvalidArgumentError(
        absl::StrCat("planned_problems: ", count, " problems, at most ",
                     kMaxReportPlannedProblems, " allowed"));
  }
  args.planned.reserve(count);
  for (int i = 0; i < count; ++i) {
    const std::string& text = request.planned_problems(i);
    const std::string field = absl::StrCat("planned_problems[", i, "]");
    RETURN_IF_ERROR(CheckLength(field, text, kMaxPlannedProblemBytes));
    absl::StatusOr<ConvProblem> problem = ConvProblem::Parse(text);
    if (!problem.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": ", problem.status().message()));
    }
    args.planned.push_back(*std::move(problem));
  }
  return args;
}

absl::StatusOr<ImportHeader> ValidateImportHeader(const v1::ImportLine& first,
                                                  int64_t max_lines) {
  const int64_t expected = first.expected_lines();
  if (expected < 0) {
    return absl::InvalidArgumentError("expected_lines: must not be negative");
  }
  if (expected > max_lines) {
    return absl::ResourceExhaustedError(
        absl::StrCat("import of ", expected, " lines is larger than ",
                     max_lines, " lines; split the file"));
  }
  if (!first.import_id().empty()) {
    RETURN_IF_ERROR(ValidateImportId(first.import_id()));
  }
  return ImportHeader{expected, first.import_id()};
}

absl::Status ValidateImportId(const std::string& id) {
  RETURN_IF_ERROR(CheckLength("import_id", id, kMaxImportIdBytes));
  if (id.empty() || !absl::c_all_of(id, [](char c) {
        return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
               c == '_' || c == '-';
      })) {
    return absl::InvalidArgumentError(absl::StrCat(
        "import_id: must be 1 to ", kMaxImportIdBytes, " of [A-Za-z0-9_-]"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Record> ValidateImportLine(const v1::ImportLine& line) {
  RETURN_IF_ERROR(CheckLength("line", line.json(), kMaxImportLineBytes));
  const std::optional<size_t> bad = FirstNonUtf8Byte(line.json());
  if (bad.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("not valid UTF-8 (byte ", *bad + 1, ")"));
  }
  return RecordFromJson(line.json());
}

absl::Status ValidateImportStatus(const v1::ImportStatusRequest& request) {
  return ValidateImportId(request.import_id());
}

namespace {

// [a-z0-9_]{1,32}
bool CounterName(const std::string& s) {
  if (s.empty() || s.size() > 32) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<std::map<std::string, int64_t>> ValidateReportCounters(
    const v1::ReportCountersRequest& request) {
  if (!CounterName(request.source())) {
    return absl::InvalidArgumentError(
        "source: must be 1 to 32 of [a-z0-9_]");
  }
  if (request.counts_size() > kMaxReportedCounts) {
    return absl::InvalidArgumentError(absl::StrCat(
        "counts: at most ", kMaxReportedCounts, " entries, got ",
        request.counts_size()));
  }
  std::map<std::string, int64_t> out;
  for (const auto& [name, count] : request.counts()) {
    if (!CounterName(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "counts: name \"", name.substr(0, 40),
          "\" must be 1 to 32 of [a-z0-9_]"));
    }
    if (count < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("counts: ", name, " is negative"));
    }
    out[absl::StrCat(request.source(), ".", name)] = count;
  }
  return out;
}

}  // namespace tunedb
