// TuneDbService: the tunedb.v1.TuneDb gRPC service. A thin final class: it
// reads and validates the wire messages (the one validation of a request's
// problem and device on its way down), calls the TuningCore or the Store, and
// converts absl::Status to grpc::Status (proto/grpc_status.h). No tuning
// logic lives here.
//
// The service reads every request message itself (gRPC's streamed-unary,
// split-streaming and raw bidirectional handlers), so a message that does
// not parse is INVALID_ARGUMENT naming it: never INTERNAL with no message,
// and never taken for the end of a stream. An Import with such a message
// imports nothing; a TuneBatch answers that item with INVALID_ARGUMENT and
// goes on.
//
// Thread safety: thread-safe, as gRPC requires (state lives in the core).
#ifndef TUNEDB_SERVER_SERVICE_TUNEDB_SERVICE_H_
#define TUNEDB_SERVER_SERVICE_TUNEDB_SERVICE_H_

#include <atomic>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "proto/wire_limits.h"
#include "server/service/job_answers.h"
#include "server/service/request_validation.h"
#include "server/tuning/tuning_core.h"
#include "tunedb/v1/tunedb.grpc.pb.h"

namespace tunedb {

class TuneDbService final : public v1::TuneDb::StreamedService {
 public:
  struct Options {
    // Largest Import, in lines. Default kMaxImportLines (one million).
    int64_t max_import_lines = kMaxImportLines;
    // Concurrent Tunes per TuneBatch stream. Default 8.
    int batch_parallelism = 8;
    // Daemon version reported by Stats.
    std::string version;
    // The bounds of the jobs' first answers. Default: JobAnswers::Options.
    JobAnswers::Options job_answers;
    // The fleet database, for a fleet's Report; null: none (such a Report
    // is FAILED_PRECONDITION). Must outlive the service.
    FleetStore* fleet_store = nullptr;
  };

  TuneDbService(TuningCore* core, Options options);

  // New calls are refused with UNAVAILABLE from now on (shutdown).
  void StopAccepting() { stopping_.store(true); }

  // The jobs' first answers, for the metrics.
  const JobAnswers& job_answers() const { return job_answers_; }

 private:
  template <class Request, class Response>
  using Unary = grpc::ServerUnaryStreamer<Request, Response>;
  template <class Request, class Response>
  using RawStream = grpc::ServerReaderWriter<Response, grpc::ByteBuffer>;

  // The gRPC entry points: each reads its request and calls the handler of
  // the same name below.
  grpc::Status StreamedLookup(
      grpc::ServerContext* context,
      Unary<v1::LookupRequest, v1::LookupResponse>* call) override;
  grpc::Status StreamedTune(
      grpc::ServerContext* context,
      Unary<v1::TuneRequest, v1::TuneResponse>* call) override;
  grpc::Status StreamedDevices(
      grpc::ServerContext* context,
      Unary<v1::DevicesRequest, v1::DevicesResponse>* call) override;
  grpc::Status StreamedStats(
      grpc::ServerContext* context,
      Unary<v1::StatsRequest, v1::StatsResponse>* call) override;
  grpc::Status StreamedInvalidate(
      grpc::ServerContext* context,
      Unary<v1::InvalidateRequest, v1::InvalidateResponse>* call) override;
  grpc::Status StreamedCheckRecords(
      grpc::ServerContext* context,
      Unary<v1::CheckRecordsRequest, v1::CheckRecordsResponse>* call) override;
  grpc::Status StreamedQuarantineRecords(
      grpc::ServerContext* context,
      Unary<v1::QuarantineRecordsRequest, v1::QuarantineRecordsResponse>* call)
      override;
  grpc::Status StreamedReportCounters(
      grpc::ServerContext* context,
      Unary<v1::ReportCountersRequest, v1::ReportCountersResponse>* call)
      override;
  grpc::Status StreamedImportStatus(
      grpc::ServerContext* context,
      Unary<v1::ImportStatusRequest, v1::ImportStatusResponse>* call) override;
  grpc::Status StreamedWarm(
      grpc::ServerContext* context,
      Unary<v1::WarmRequest, v1::WarmResponse>* call) override;
  grpc::Status StreamedReport(
      grpc::ServerContext* context,
      Unary<v1::ReportRequest, v1::ReportResponse>* call) override;
  grpc::Status StreamedQuery(
      grpc::ServerContext* context,
      grpc::ServerSplitStreamer<v1::QueryRequest, v1::Record>* call) override;
  grpc::Status StreamedExport(
      grpc::ServerContext* context,
      grpc::ServerSplitStreamer<v1::ExportRequest, v1::ExportLine>* call)
      override;
  grpc::Status RawTuneBatch(
      grpc::ServerContext* context,
      RawStream<v1::TuneBatchRequest, v1::TuneBatchResponse>* stream);
  grpc::Status RawImport(grpc::ServerContext* context,
                         RawStream<v1::ImportLine, v1::ImportResponse>* stream);

  // The handlers, on parsed requests.
  absl::Status Lookup(const v1::LookupRequest& request,
                      v1::LookupResponse* response);
  // Lookup's answer to a validated request, for Lookup and each key of a
  // Warm alike: AnswerLookup, then the job's agreement (job_answers.h).
  absl::Status AnswerForJob(const LookupArgs& args,
                            const v1::LookupRequest& request,
                            v1::LookupResponse* response);
  // Lookup's answer before a job's fixed one replaces it: the core's one
  // Lookup decision (TuningCore::Lookup), translated to the response.
  absl::Status AnswerLookup(const LookupArgs& args,
                            const v1::LookupRequest& request,
                            v1::LookupResponse* response);
  absl::Status Tune(grpc::ServerContext* context,
                    const v1::TuneRequest& request, v1::TuneResponse* response);
  absl::Status Devices(v1::DevicesResponse* response);
  absl::Status Stats(v1::StatsResponse* response);
  absl::Status Invalidate(const v1::InvalidateRequest& request,
                          v1::InvalidateResponse* response);
  absl::Status CheckRecords(grpc::ServerContext* context,
                            v1::CheckRecordsResponse* response);
  absl::Status QuarantineRecords(v1::QuarantineRecordsResponse* response);
  absl::Status ReportCounters(const v1::ReportCountersRequest& request);
  absl::Status ImportStatus(const v1::ImportStatusRequest& request,
                            v1::ImportStatusResponse* response);
  // Has the core remember that args.program asked `request` (its key and
  // constraints: program, job and the answer's flags cleared).
  void RememberLookup(const LookupArgs& args,
                      const v1::LookupRequest& request);
  absl::Status Warm(const v1::WarmRequest& request,
                    v1::WarmResponse* response);
  // One remembered request (`asked`, bytes) answered into `entry` under
  // `warm`'s job and flags, as Lookup answers it; false where it no longer
  // parses or validates, or its answer is an error other than NOT_FOUND.
  bool AnswerRemembered(const v1::WarmRequest& warm, const std::string& asked,
                        v1::WarmEntry* entry);
  absl::Status Report(grpc::ServerContext* context,
                      const v1::ReportRequest& request,
                      v1::ReportResponse* response);
  absl::Status Query(grpc::ServerContext* context,
                     const v1::QueryRequest& request,
                     const std::function<bool(const v1::Record&)>& write);
  absl::Status Export(grpc::ServerContext* context,
                      const v1::ExportRequest& request,
                      const std::function<bool(const v1::ExportLine&)>& write);

  // OK, or UNAVAILABLE once StopAccepting was called.
  absl::Status Accepting() const;

  TuningCore* const core_;
  JobAnswers job_answers_;
  const Options options_;
  const absl::Time started_;
  std::atomic<bool> stopping_{false};
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SERVICE_TUNEDB_SERVICE_H_
