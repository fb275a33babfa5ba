// Fuzz target: the validation of the service's requests
// (server/service/request_validation.cc, the functions TuneDbService runs on
// each request). The first byte picks the request message; the rest is
// parsed as it, as gRPC would, and validated (a Lookup's bytes also as a
// WarmRequest, an Export's as a ReportRequest). Properties: what passes is
// consistent (a valid key, a positive page size, a filter or `all`), and a
// valid problem, device or set of constraints converts to the wire and back
// to the same value.
#include <cstddef>
#include <cstdint>

#include "common/job_id.h"
#include "google/protobuf/stubs/logging.h"
#include "proto/convert.h"
#include "proto/wire_limits.h"
#include "server/service/request_validation.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using namespace tunedb;  // NOLINT(build/namespaces): a fuzz target's file

// Malformed input is the point here: leave protobuf's parse errors unsaid.
[[maybe_unused]] const bool kProtobufQuiet =
    (google::protobuf::SetLogHandler(nullptr), true);

template <typename T, typename P>
void CheckWireRoundTrip(const T& value) {
  P wire;
  ToProto(value, &wire);
  absl::StatusOr<T> back = FromProto(wire);
  FUZZ_CHECK(back.ok());
  FUZZ_CHECK(*back == value);
}

void CheckConstraints(const Constraints& c) {
  FUZZ_CHECK(!c.max_workspace_bytes || *c.max_workspace_bytes >= 0);
  v1::Constraints wire;
  ToProto(c, &wire);
  absl::StatusOr<Constraints> back = FromProto(wire);
  FUZZ_CHECK(back.ok());
  FUZZ_CHECK(back->max_workspace_bytes == c.max_workspace_bytes);
  FUZZ_CHECK(back->deterministic_only == c.deterministic_only);
  FUZZ_CHECK(back->launch_mode == c.launch_mode);
}

void CheckFilter(const RecordFilter& f) {
  FUZZ_CHECK(f.Validate().ok());
  FUZZ_CHECK(f.since_us >= 0 && f.until_us >= 0);
  (void)f.KeyHash();
}

template <typename M>
bool Parse(const uint8_t* data, size_t size, M* message) {
  return message->ParseFromArray(data, static_cast<int>(size));
}

void Lookup(const uint8_t* data, size_t size) {
  v1::LookupRequest request;
  if (!Parse(data, size, &request)) return;
  absl::StatusOr<LookupArgs> args = ValidateLookup(request);
  if (!args.ok()) return;
  FUZZ_CHECK(args->key.key().Validate().ok());
  FUZZ_CHECK(args->key.text() == args->key.key().ToText());
  CheckWireRoundTrip<ConvProblem, v1::ConvProblem>(args->key.problem());
  CheckWireRoundTrip<DeviceKey, v1::DeviceKey>(args->key.device());
  CheckConstraints(args->constraints);
}

void Warm(const uint8_t* data, size_t size) {
  v1::WarmRequest request;
  if (!Parse(data, size, &request)) return;
  absl::StatusOr<WarmArgs> args = ValidateWarm(request);
  if (!args.ok()) return;
  FUZZ_CHECK(!args->program.empty());
  FUZZ_CHECK(args->program.size() <= kMaxJobIdBytes);
  FUZZ_CHECK(args->max_keys >= 0);
  CheckWireRoundTrip<DeviceKey, v1::DeviceKey>(args->device);
}

void Tune(const v1::TuneRequest& request) {
  absl::StatusOr<TuneArgs> args = ValidateTune(request);
  if (!args.ok()) return;
  FUZZ_CHECK(args->problem.Validate().ok());
  CheckWireRoundTrip<ConvProblem, v1::ConvProblem>(args->problem);
  FUZZ_CHECK(args->device.has_value() == request.has_device());
  if (args->device) {
    CheckWireRoundTrip<DeviceKey, v1::DeviceKey>(*args->device);
  }
  CheckConstraints(args->constraints);
}

void Query(const uint8_t* data, size_t size) {
  v1::QueryRequest request;
  if (!Parse(data, size, &request)) return;
  absl::StatusOr<QueryArgs> args = ValidateQuery(request);
  if (!args.ok()) return;
  CheckFilter(args->filter);
  FUZZ_CHECK(args->limit > 0);
  FUZZ_CHECK(args->after_id >= 0);
}

void Invalidate(const uint8_t* data, size_t size) {
  v1::InvalidateRequest request;
  if (!Parse(data, size, &request)) return;
  absl::StatusOr<RecordFilter> filter = ValidateInvalidate(request);
  if (!filter.ok()) return;
  CheckFilter(*filter);
  FUZZ_CHECK(filter->empty() == request.all());
}

void Export(const uint8_t* data, size_t size) {
  v1::ExportRequest request;
  if (!Parse(data, size, &request)) return;
  absl::StatusOr<RecordFilter> filter = ValidateExport(request);
  if (filter.ok()) CheckFilter(*filter);
}

void Report(const uint8_t* data, size_t size) {
  v1::ReportRequest request;
  if (!Parse(data, size, &request)) return;
  absl::StatusOr<ReportArgs> args = ValidateReport(request);
  if (!args.ok()) return;
  CheckFilter(args->filter);
  FUZZ_CHECK(args->planned.size() <=
             static_cast<size_t>(kMaxReportPlannedProblems));
  for (const ConvProblem& p : args->planned) {
    FUZZ_CHECK(p.Validate().ok());
    absl::StatusOr<ConvProblem> back = ConvProblem::Parse(p.ToText());
    FUZZ_CHECK(back.ok() && *back == p);
  }
}

void Import(const uint8_t* data, size_t size) {
  v1::ImportLine line;
  if (!Parse(data, size, &line)) return;
  const absl::StatusOr<ImportHeader> header =
      ValidateImportHeader(line, /*max_lines=*/1000000);
  if (line.import_id().empty()) {
    FUZZ_CHECK(header.ok() == (line.expected_lines() >= 0 &&
                               line.expected_lines() <= 1000000));
  }
  if (header.ok()) {
    FUZZ_CHECK(header->expected_lines == line.expected_lines());
    FUZZ_CHECK(header->import_id.size() <= kMaxImportIdBytes);
  }
  absl::StatusOr<Record> record = ValidateImportLine(line);
  if (record.ok()) FUZZ_CHECK(record->key.Validate().ok());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t which = data[0];
  ++data;
  --size;
  switch (which % 7) {
    case 0:
      Lookup(data, size);
      Warm(data, size);
      break;
    case 1: {
      v1::TuneRequest request;
      if (Parse(data, size, &request)) Tune(request);
      break;
    }
    case 2: {
      // Each item of a TuneBatch stream is a Tune.
      v1::TuneBatchRequest request;
      if (Parse(data, size, &request)) Tune(request.request());
      break;
    }
    case 3:
      Query(data, size);
      break;
    case 4:
      Invalidate(data, size);
      break;
    case 5:
      Export(data, size);
      Report(data, size);  // its filter is field 1, as Export's
      break;
    case 6:
      Import(data, size);
      break;
  }
  return 0;
}
