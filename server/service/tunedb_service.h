// TuneDbService: the tunedb.v1.TuneDb gRPC service. A thin final class: it
// validates and converts the wire messages (the one validation of a request's
// problem and device on its way down), calls the TuningCore or the Store, and
// converts absl::Status to grpc::Status (proto/grpc_status.h). No tuning
// logic lives here.
//
// Thread safety: thread-safe, as gRPC requires (state lives in the core).
#ifndef TUNEDB_SERVER_SERVICE_TUNEDB_SERVICE_H_
#define TUNEDB_SERVER_SERVICE_TUNEDB_SERVICE_H_

#include <atomic>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "proto/wire_limits.h"
#include "server/tuning/tuning_core.h"
#include "tunedb/v1/tunedb.grpc.pb.h"

namespace tunedb {

class TuneDbService final : public v1::TuneDb::Service {
 public:
  struct Options {
    // Largest Import, in lines. Default kMaxImportLines (one million).
    int64_t max_import_lines = kMaxImportLines;
    // Concurrent Tunes per TuneBatch stream. Default 8.
    int batch_parallelism = 8;
    // Daemon version reported by Stats.
    std::string version;
  };

  TuneDbService(TuningCore* core, Options options);

  grpc::Status Lookup(grpc::ServerContext* context,
                      const v1::LookupRequest* request,
                      v1::LookupResponse* response) override;
  grpc::Status Tune(grpc::ServerContext* context,
                    const v1::TuneRequest* request,
                    v1::TuneResponse* response) override;
  grpc::Status TuneBatch(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::TuneBatchResponse, v1::TuneBatchRequest>*
          stream) override;
  grpc::Status Query(grpc::ServerContext* context,
                     const v1::QueryRequest* request,
                     grpc::ServerWriter<v1::Record>* writer) override;
  grpc::Status Devices(grpc::ServerContext* context,
                       const v1::DevicesRequest* request,
                       v1::DevicesResponse* response) override;
  grpc::Status Stats(grpc::ServerContext* context,
                     const v1::StatsRequest* request,
                     v1::StatsResponse* response) override;
  grpc::Status Invalidate(grpc::ServerContext* context,
                          const v1::InvalidateRequest* request,
                          v1::InvalidateResponse* response) override;
  grpc::Status Export(grpc::ServerContext* context,
                      const v1::ExportRequest* request,
                      grpc::ServerWriter<v1::ExportLine>* writer) override;
  grpc::Status Import(grpc::ServerContext* context,
                      grpc::ServerReader<v1::ImportLine>* reader,
                      v1::ImportResponse* response) override;
  grpc::Status CheckRecords(grpc::ServerContext* context,
                            const v1::CheckRecordsRequest* request,
                            v1::CheckRecordsResponse* response) override;
  grpc::Status QuarantineRecords(
      grpc::ServerContext* context, const v1::QuarantineRecordsRequest* request,
      v1::QuarantineRecordsResponse* response) override;
  grpc::Status ReportCounters(grpc::ServerContext* context,
                              const v1::ReportCountersRequest* request,
                              v1::ReportCountersResponse* response) override;

  // New calls are refused with UNAVAILABLE from now on (shutdown).
  void StopAccepting() { stopping_.store(true); }

 private:
  // The core's answer for one TuneRequest, as a TuneResponse.
  absl::Status DoTune(grpc::ServerContext* context,
                      const v1::TuneRequest& request,
                      v1::TuneResponse* response);

  TuningCore* const core_;
  const Options options_;
  const absl::Time started_;
  std::atomic<bool> stopping_{false};
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SERVICE_TUNEDB_SERVICE_H_
