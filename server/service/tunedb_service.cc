#include "server/service/tunedb_service.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/constraints_text.h"
#include "common/status_macros.h"
#include "proto/convert.h"
#include "proto/grpc_status.h"
#include "proto/wire_limits.h"
#include "server/service/import_session.h"
#include "server/service/request_validation.h"
#include "server/service/store_report.h"
#include "server/service/tune_batch_run.h"
#include "server/service/wire_message.h"
#include "spdlog/spdlog.h"
#include "store/record_json.h"

namespace tunedb {
namespace {

absl::Time Deadline(const grpc::ServerContext* context) {
  auto d = context->deadline();
  if (d == std::chrono::system_clock::time_point::max()) {
    return absl::InfiniteFuture();
  }
  return absl::FromChrono(d);
}

// Logs a filter that names no indexed field: it reads every record.
void LogIfItScans(const RecordFilter& f) {
  if (!f.empty() && !f.UsesIndex()) {
    spdlog::info(
        "a filter of no indexed field ({}) reads every record; name one of "
        "{} or hash to read through an index",
        absl::StrJoin(f.fields, ", ", absl::PairFormatter("=")),
        absl::StrJoin(IndexedFilterFields(), ", "));
  }
}

void BadRowToProto(const BadRow& in, v1::BadRow* out) {
  out->set_id(in.id);
  out->set_key_text(in.key_text);
  out->set_reason(in.reason);
}

// A store status for the caller: a row that cannot be read (DATA_LOSS) says
// what to do about it.
absl::Status WithRepairHint(absl::Status status) {
  if (!absl::IsDataLoss(status)) return status;
  return absl::DataLossError(absl::StrCat(
      status.message(),
      " (`tunedb doctor` lists unreadable records, `tunedb repair` "
      "quarantines them)"));
}

void AnswerToProto(const TuneAnswer& answer, v1::Choice* choice,
                   v1::Record* record) {
  if (answer.choice) ToProto(*answer.choice, choice->mutable_algo());
  ToProto(*answer.record, record);
}

// Places of TuneBatch and Import in tunedb.v1.TuneDb (their order in the
// proto's service block, from 0): the service reads their messages as bytes.
constexpr int kTuneBatchMethod = 2;
constexpr int kImportMethod = 8;

// A unary call: reads the request (INVALID_ARGUMENT if it does not parse),
// runs `handle`, and writes the response when it succeeded. The response is
// written as the last message: gRPC then waits for it together with the
// status, once, rather than for the write and then for the status.
template <class Request, class Response, class Handle>
grpc::Status ServeUnary(grpc::ServerUnaryStreamer<Request, Response>* call,
                        Handle handle) {
  Request request;
  if (!call->Read(&request)) return ToGrpcStatus(MalformedMessage<Request>());
  Response response;
  absl::Status status = handle(request, &response);
  if (!status.ok()) return ToGrpcStatus(status);
  call->WriteLast(response, grpc::WriteOptions());
  return grpc::Status::OK;
}

// A server-streaming call: reads the request, then `handle` writes.
template <class Request, class Response, class Handle>
grpc::Status ServeStream(grpc::ServerSplitStreamer<Request, Response>* call,
                         Handle handle) {
  Request request;
  if (!call->Read(&request)) return ToGrpcStatus(MalformedMessage<Request>());
  return ToGrpcStatus(handle(
      request, [call](const Response& out) { return call->Write(out); }));
}

}  // namespace

TuneDbService::TuneDbService(TuningCore* core, Options options)
    : core_(core),
      job_answers_(options.job_answers),
      options_(std::move(options)),
      started_(absl::Now()) {
  MarkMethodStreamed(
      kTuneBatchMethod,
      new grpc::internal::BidiStreamingHandler<
          TuneDbService, grpc::ByteBuffer, v1::TuneBatchResponse>(
          [](TuneDbService* service, grpc::ServerContext* context,
             RawStream<v1::TuneBatchRequest, v1::TuneBatchResponse>* stream) {
            return service->RawTuneBatch(context, stream);
          },
          this));
  MarkMethodStreamed(
      kImportMethod,
      new grpc::internal::BidiStreamingHandler<TuneDbService, grpc::ByteBuffer,
                                               v1::ImportResponse>(
          [](TuneDbService* service, grpc::ServerContext* context,
             RawStream<v1::ImportLine, v1::ImportResponse>* stream) {
            return service->RawImport(context, stream);
          },
          this));
}

absl::Status TuneDbService::Accepting() const {
  if (stopping_.load()) {
    return absl::UnavailableError("tunedbd is shutting down");
  }
  return absl::OkStatus();
}

// --- The gRPC entry points ------------------------------------------------

grpc::Status TuneDbService::StreamedLookup(
    grpc::ServerContext*, Unary<v1::LookupRequest, v1::LookupResponse>* call) {
  return ServeUnary(call, [this](const auto& in, auto* out) {
    return Lookup(in, out);
  });
}

grpc::Status TuneDbService::StreamedTune(
    grpc::ServerContext* context,
    Unary<v1::TuneRequest, v1::TuneResponse>* call) {
  return ServeUnary(call, [this, context](const auto& in, auto* out) {
    RETURN_IF_ERROR(Accepting());
    return Tune(context, in, out);
  });
}

grpc::Status TuneDbService::StreamedDevices(
    grpc::ServerContext*,
    Unary<v1::DevicesRequest, v1::DevicesResponse>* call) {
  return ServeUnary(call,
                    [this](const auto&, auto* out) { return Devices(out); });
}

grpc::Status TuneDbService::StreamedStats(
    grpc::ServerContext*, Unary<v1::StatsRequest, v1::StatsResponse>* call) {
  return ServeUnary(call,
                    [this](const auto&, auto* out) { return Stats(out); });
}

grpc::Status TuneDbService::StreamedInvalidate(
    grpc::ServerContext*,
    Unary<v1::InvalidateRequest, v1::InvalidateResponse>* call) {
  return ServeUnary(call, [this](const auto& in, auto* out) {
    return Invalidate(in, out);
  });
}

grpc::Status TuneDbService::StreamedCheckRecords(
    grpc::ServerContext* context,
    Unary<v1::CheckRecordsRequest, v1::CheckRecordsResponse>* call) {
  return ServeUnary(call, [this, context](const auto&, auto* out) {
    return CheckRecords(context, out);
  });
}

grpc::Status TuneDbService::StreamedQuarantineRecords(
    grpc::ServerContext*,
    Unary<v1::QuarantineRecordsRequest, v1::QuarantineRecordsResponse>* call) {
  return ServeUnary(call, [this](const auto&, auto* out) {
    return QuarantineRecords(out);
  });
}

grpc::Status TuneDbService::StreamedReportCounters(
    grpc::ServerContext*,
    Unary<v1::ReportCountersRequest, v1::ReportCountersResponse>* call) {
  return ServeUnary(call, [this](const auto& in, auto*) {
    return ReportCounters(in);
  });
}

grpc::Status TuneDbService::StreamedImportStatus(
    grpc::ServerContext*,
    Unary<v1::ImportStatusRequest, v1::ImportStatusResponse>* call) {
  return ServeUnary(call, [this](const auto& in, auto* out) {
    return ImportStatus(in, out);
  });
}

grpc::Status TuneDbService::StreamedWarm(
    grpc::ServerContext*, Unary<v1::WarmRequest, v1::WarmResponse>* call) {
  return ServeUnary(call, [this](const auto& in, auto* out) {
    return Warm(in, out);
  });
}

grpc::Status TuneDbService::StreamedReport(
    grpc::ServerContext* context,
    Unary<v1::ReportRequest, v1::ReportResponse>* call) {
  return ServeUnary(call, [this, context](const auto& in, auto* out) {
    return Report(context, in, out);
  });
}

grpc::Status TuneDbService::StreamedQuery(
    grpc::ServerContext* context,
    grpc::ServerSplitStreamer<v1::QueryRequest, v1::Record>* call) {
  return ServeStream(call, [this, context](const auto& in, const auto& write) {
    return Query(context, in, write);
  });
}

grpc::Status TuneDbService::StreamedExport(
    grpc::ServerContext* context,
    grpc::ServerSplitStreamer<v1::ExportRequest, v1::ExportLine>* call) {
  return ServeStream(call, [this, context](const auto& in, const auto& write) {
    return Export(context, in, write);
  });
}

grpc::Status TuneDbService::RawTuneBatch(
    grpc::ServerContext* context,
    RawStream<v1::TuneBatchRequest, v1::TuneBatchResponse>* stream) {
  if (absl::Status accepting = Accepting(); !accepting.ok()) {
    return ToGrpcStatus(accepting);
  }
  TuneBatchRun run(
      options_.batch_parallelism,
      [this, context](const v1::TuneRequest& in, v1::TuneResponse* out) {
        RETURN_IF_ERROR(Accepting());
        return Tune(context, in, out);
      },
      [stream](const v1::TuneBatchResponse& out) {
        return stream->Write(out);
      });
  grpc::ByteBuffer message;
  for (int64_t n = 1; stream->Read(&message); ++n) {
    v1::TuneBatchRequest in;
    absl::Status parsed = ParseWireMessage(&message, n, &in);
    if (parsed.ok()) {
      run.Add(std::move(*in.mutable_request()));
    } else {
      run.Add(parsed);
    }
  }
  run.Finish();
  if (context->IsCancelled()) {
    return grpc::Status(grpc::StatusCode::CANCELLED, "client cancelled");
  }
  return grpc::Status::OK;
}

grpc::Status TuneDbService::RawImport(
    grpc::ServerContext* context,
    RawStream<v1::ImportLine, v1::ImportResponse>* stream) {
  auto run = [&]() -> absl::Status {
    RETURN_IF_ERROR(Accepting());
    ASSIGN_OR_RETURN(std::unique_ptr<Store::StagedImport> staged,
                     core_->BeginImport());
    ImportSession session(*core_, std::move(staged), options_.max_import_lines);
    // The client learns that its import began (and holds one of the
    // daemon's places) before it sends a line: WaitForInitialMetadata.
    stream->SendInitialMetadata();
    grpc::ByteBuffer message;
    while (stream->Read(&message)) RETURN_IF_ERROR(session.Take(&message));
    v1::ImportResponse response;
    RETURN_IF_ERROR(session.Finish(context->IsCancelled(), &response));
    stream->Write(response);
    return absl::OkStatus();
  };
  absl::Status status = run();
  if (!status.ok() && !context->IsCancelled()) {
    spdlog::warn("an import failed: {}", std::string(status.message()));
  }
  return ToGrpcStatus(status);
}

// --- The handlers ----------------------------------------------------------

absl::Status TuneDbService::Lookup(const v1::LookupRequest& request,
                                   v1::LookupResponse* response) {
  RETURN_IF_ERROR(Accepting());
  ASSIGN_OR_RETURN(LookupArgs args, ValidateLookup(request));
  if (!args.program.empty()) RememberLookup(args, request);
  absl::Status answered = AnswerForJob(args, request, response);
  if (request.miss_as_ok() && absl::IsNotFound(answered)) {
    response->Clear();
    response->set_not_stored(true);
    return absl::OkStatus();
  }
  return answered;
}

absl::Status TuneDbService::AnswerForJob(const LookupArgs& args,
                                         const v1::LookupRequest& request,
                                         v1::LookupResponse* response) {
  absl::Status answered = AnswerLookup(args, request, response);
  if (args.job.empty() ||
      (!answered.ok() && !absl::IsNotFound(answered))) {
    return answered;  // no job, or an error rather than an answer
  }
  // The job's first answer for this key and these constraints is its
  // answer (job_answers.h). The cost settings change Choose's answer, so
  // they are part of the slot.
  const Constraints& c = args.constraints;
  const std::string slot =
      absl::StrCat(args.key.text(), "|", ConstraintsText(c), " horizon=",
                   c.compile_horizon_calls, " plans=",
                   c.loads_stored_plans ? 1 : 0, "|", request.predict() ? 1 : 0,
                   request.predict_from_other_versions() ? 1 : 0,
                   request.choice_only() ? 1 : 0);
  return job_answers_.Fix(args.job, slot, std::move(answered), response,
                          absl::Now());
}

absl::Status TuneDbService::AnswerLookup(const LookupArgs& args,
                                         const v1::LookupRequest& request,
                                         v1::LookupResponse* response) {
  std::optional<Predictors> predict;
  if (request.predict()) {
    predict = Predictors::kAll;
  } else if (request.predict_from_other_versions()) {
    predict = Predictors::kOtherVersions;
  }
  ASSIGN_OR_RETURN(LookupAnswer answer,
                   core_->Lookup(args.key, args.constraints, predict,
                                 args.program));
  if (answer.choice) {
    ToProto(*answer.choice, response->mutable_choice()->mutable_algo());
  }
  if (answer.prediction) {
    ToProto(*answer.prediction, response->mutable_prediction());
    return absl::OkStatus();
  }
  if (!request.choice_only()) {
    ToProto(*answer.record, response->mutable_record());
  }
  response->set_record_id(answer.record->id);
  response->set_measured_at_us(answer.record->measured_at_us);
  return absl::OkStatus();
}

absl::Status TuneDbService::Tune(grpc::ServerContext* context,
                                 const v1::TuneRequest& request,
                                 v1::TuneResponse* response) {
  ASSIGN_OR_RETURN(TuneArgs args, ValidateTune(request));
  ASSIGN_OR_RETURN(TuneAnswer answer,
                   core_->Tune(args.problem, args.device, args.constraints,
                               args.mode, Deadline(context),
                               [context] { return context->IsCancelled(); }));
  if (answer.held) {
    response->set_held(true);
    return absl::OkStatus();
  }
  AnswerToProto(answer, response->mutable_choice(), response->mutable_record());
  if (!answer.choice) response->clear_choice();
  response->set_searched(answer.searched);
  response->set_waited_for_search(answer.waited_for_search);
  return absl::OkStatus();
}

absl::Status TuneDbService::Query(
    grpc::ServerContext* context, const v1::QueryRequest& request,
    const std::function<bool(const v1::Record&)>& write) {
  RETURN_IF_ERROR(Accepting());
  ASSIGN_OR_RETURN(QueryArgs args, ValidateQuery(request));
  LogIfItScans(args.filter);
  std::function<bool(const BadRow&)> report;
  if (request.report_bad_rows()) {
    report = [&](const BadRow& bad) {
      if (context->IsCancelled()) return false;
      v1::Record out;
      out.set_id(bad.id);
      BadRowToProto(bad, out.mutable_unreadable());
      return write(out);
    };
  }
  return WithRepairHint(core_->store().Query(
      args.filter, args.after_id, args.limit,
      [&](const Record& r) {
        if (context->IsCancelled()) return false;
        v1::Record out;
        ToProto(r, &out);
        return write(out);
      },
      report));
}

absl::Status TuneDbService::Devices(v1::DevicesResponse* response) {
  const auto& devices = core_->devices();
  for (size_t i = 0; i < devices.size(); ++i) {
    const DeviceInfo& d = devices[i];
    v1::DeviceInfo* out = response->add_devices();
    ToProto(d.key, out->mutable_key());
    out->set_ordinal(d.ordinal);
    out->set_uuid(d.uuid);
    out->set_driver_version(d.driver_version);
    out->set_total_memory_bytes(d.total_memory_bytes);
    out->set_mig(d.mig);
    out->set_queue_depth(core_->QueueDepth(static_cast<int>(i)));
    out->set_healthy(!stopping_.load());
  }
  response->set_finder(core_->finder_name());
  return absl::OkStatus();
}

absl::Status TuneDbService::Stats(v1::StatsResponse* response) {
  CoreStats s = core_->Stats();
  response->set_records(s.records);
  response->set_hits(s.hits);
  response->set_misses(s.misses);
  response->set_predictions(s.predictions);
  response->set_searches(s.searches);
  response->set_search_failures(s.search_failures);
  response->set_coalesced(s.coalesced);
  response->set_waited_for_idle(s.waited_for_idle);
  response->set_revalidated(s.revalidated);
  response->set_revalidation_full_searches(s.revalidation_full_searches);
  response->set_search_ms_total(s.search_ms_total);
  for (const auto& [index, depth] : s.queue_depths) {
    (*response->mutable_queue_depths())[index] = depth;
  }
  response->set_database_bytes(s.database_bytes);
  response->set_finder(s.finder);
  response->set_rejected(s.rejected);
  response->set_uptime_s(absl::ToDoubleSeconds(absl::Now() - started_));
  response->set_version(options_.version);
  response->set_database_path(s.database_path);
  for (const auto& [name, sum] : s.reported.sums) {
    (*response->mutable_reported())[name] = sum;
  }
  response->set_reports(s.reported.reports);
  if (s.fleet.enabled) {
    v1::FleetStats* fleet = response->mutable_fleet();
    fleet->set_database(s.fleet.database);
    fleet->set_connected(s.fleet.connected);
    fleet->set_last_error(s.fleet.last_error);
    fleet->set_last_error_us(s.fleet.last_error_us);
    fleet->set_outbox(s.fleet.outbox);
    fleet->set_published(s.fleet.published);
    fleet->set_fetched(s.fleet.fetched);
    fleet->set_claims(s.fleet.claims);
    fleet->set_waits(s.fleet.waits);
    fleet->set_errors(s.fleet.errors);
    fleet->set_jobs_done(s.fleet.jobs_done);
  }
  return absl::OkStatus();
}

absl::Status TuneDbService::Invalidate(const v1::InvalidateRequest& request,
                                       v1::InvalidateResponse* response) {
  RETURN_IF_ERROR(Accepting());
  ASSIGN_OR_RETURN(RecordFilter filter, ValidateInvalidate(request));
  LogIfItScans(filter);
  ASSIGN_OR_RETURN(int64_t deleted, core_->Invalidate(filter));
  spdlog::info("invalidated {} records", deleted);
  response->set_deleted(deleted);
  return absl::OkStatus();
}

absl::Status TuneDbService::Export(
    grpc::ServerContext* context, const v1::ExportRequest& request,
    const std::function<bool(const v1::ExportLine&)>& write) {
  RETURN_IF_ERROR(Accepting());
  ASSIGN_OR_RETURN(RecordFilter filter, ValidateExport(request));
  LogIfItScans(filter);
  std::function<bool(const BadRow&)> skip;
  if (request.skip_bad_rows()) {
    skip = [&](const BadRow& bad) {
      if (context->IsCancelled()) return false;
      spdlog::warn("export skips record {}, which cannot be read: {}", bad.id,
                   bad.reason);
      v1::ExportLine line;
      BadRowToProto(bad, line.mutable_skipped());
      return write(line);
    };
  } else {
    // A row that cannot be read fails the export before any line is
    // sent, so no one takes a partial export for a whole one.
    RETURN_IF_ERROR(WithRepairHint(core_->store().Query(
        filter, 0, 0, [&](const Record&) { return !context->IsCancelled(); },
        nullptr)));
  }
  return WithRepairHint(core_->store().Query(
      filter, 0, 0,
      [&](const Record& r) {
        if (context->IsCancelled()) return false;
        v1::ExportLine line;
        line.set_json(RecordToJson(r));
        return write(line);
      },
      skip));
}

absl::Status TuneDbService::CheckRecords(grpc::ServerContext* context,
                                         v1::CheckRecordsResponse* response) {
  RETURN_IF_ERROR(Accepting());
  int64_t checked = 0;
  RETURN_IF_ERROR(core_->store().Query(
      RecordFilter(), 0, 0,
      [&](const Record&) {
        ++checked;
        return !context->IsCancelled();
      },
      [&](const BadRow& bad) {
        ++checked;
        BadRowToProto(bad, response->add_bad_rows());
        return !context->IsCancelled();
      }));
  if (context->IsCancelled()) return absl::CancelledError("client cancelled");
  response->set_checked(checked);
  return absl::OkStatus();
}

absl::Status TuneDbService::QuarantineRecords(
    v1::QuarantineRecordsResponse* response) {
  RETURN_IF_ERROR(Accepting());
  ASSIGN_OR_RETURN(std::vector<BadRow> moved,
                   core_->store().QuarantineBadRows());
  for (const BadRow& bad : moved) {
    spdlog::warn("quarantined record {}, which cannot be read: {}", bad.id,
                 bad.reason);
    BadRowToProto(bad, response->add_quarantined());
  }
  return absl::OkStatus();
}

absl::Status TuneDbService::ReportCounters(
    const v1::ReportCountersRequest& request) {
  RETURN_IF_ERROR(Accepting());
  ASSIGN_OR_RETURN(auto counts, ValidateReportCounters(request));
  core_->reported().Add(counts);
  return absl::OkStatus();
}

absl::Status TuneDbService::ImportStatus(
    const v1::ImportStatusRequest& request,
    v1::ImportStatusResponse* response) {
  RETURN_IF_ERROR(Accepting());
  RETURN_IF_ERROR(ValidateImportStatus(request));
  ASSIGN_OR_RETURN(std::optional<ImportReceipt> receipt,
                   core_->store().FindImport(request.import_id()));
  response->set_committed(receipt.has_value());
  if (receipt) {
    response->set_imported(receipt->imported);
    response->set_lines(receipt->lines);
    response->set_committed_at_us(receipt->committed_at_us);
  }
  return absl::OkStatus();
}

void TuneDbService::RememberLookup(const LookupArgs& args,
                                   const v1::LookupRequest& request) {
  v1::LookupRequest asked = request;
  asked.DiscardUnknownFields();
  asked.clear_program();
  asked.clear_job();
  asked.clear_predict();
  asked.clear_predict_from_other_versions();
  asked.clear_choice_only();
  core_->program_keys().Remember(args.program, args.key.device().ToText(),
                                 DeterministicBytes(asked), absl::Now());
}

absl::Status TuneDbService::Warm(const v1::WarmRequest& request,
                                 v1::WarmResponse* response) {
  RETURN_IF_ERROR(Accepting());
  ASSIGN_OR_RETURN(WarmArgs args, ValidateWarm(request));
  ASSIGN_OR_RETURN(std::vector<std::string> asked,
                   core_->program_keys().Recall(
                       args.program, args.device.ToText(), args.max_keys));
  size_t bytes = 0;
  int64_t skipped = 0;
  size_t next = 0;
  for (; next < asked.size(); ++next) {
    v1::WarmEntry entry;
    if (!AnswerRemembered(request, asked[next], &entry)) {
      ++skipped;
      continue;
    }
    // The entry's bytes in the response: its own, a tag and its length.
    const size_t entry_bytes = entry.ByteSizeLong() + 6;
    if (bytes + entry_bytes > kMaxWarmResponseBytes) break;
    bytes += entry_bytes;
    *response->add_entries() = std::move(entry);
  }
  core_->program_keys().CountWarm(response->entries_size());
  if (skipped > 0 || next < asked.size()) {
    spdlog::info(
        "Warm of program {}: {} keys answered, {} no longer valid or failed, "
        "{} past the response's {} bytes (the program asks them by Lookup)",
        args.program, response->entries_size(), skipped, asked.size() - next,
        kMaxWarmResponseBytes);
  }
  return absl::OkStatus();
}

bool TuneDbService::AnswerRemembered(const v1::WarmRequest& warm,
                                     const std::string& asked,
                                     v1::WarmEntry* entry) {
  v1::LookupRequest* request = entry->mutable_request();
  if (!request->ParseFromString(asked)) return false;
  request->set_job(warm.job());
  // Its answer counts as served to the program, as its Lookup's would.
  request->set_program(warm.program());
  request->set_predict(warm.predict());
  request->set_predict_from_other_versions(warm.predict_from_other_versions());
  request->set_choice_only(warm.choice_only());
  absl::StatusOr<LookupArgs> args = ValidateLookup(*request);
  if (!args.ok()) return false;
  absl::Status answered =
      AnswerForJob(*args, *request, entry->mutable_response());
  request->clear_job();
  request->clear_program();
  if (answered.ok()) {
    entry->set_code(static_cast<int>(absl::StatusCode::kOk));
    return true;
  }
  if (!absl::IsNotFound(answered)) return false;
  entry->set_code(static_cast<int>(absl::StatusCode::kNotFound));
  entry->clear_response();
  return true;
}

absl::Status TuneDbService::Report(grpc::ServerContext* context,
                                   const v1::ReportRequest& request,
                                   v1::ReportResponse* response) {
  RETURN_IF_ERROR(Accepting());
  ASSIGN_OR_RETURN(ReportArgs args, ValidateReport(request));
  auto cancelled = [context] { return context->IsCancelled(); };
  if (args.fleet) {
    ASSIGN_OR_RETURN(*response->mutable_report_json(),
                     FleetReport(options_.fleet_store, args, cancelled));
    return absl::OkStatus();
  }
  LogIfItScans(args.filter);
  ASSIGN_OR_RETURN(*response->mutable_report_json(),
                   StoreReport(core_->store(), args, cancelled));
  return absl::OkStatus();
}

}  // namespace tunedb
