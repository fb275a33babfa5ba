#include "server/service/tunedb_service.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "proto/convert.h"
#include "proto/grpc_status.h"
#include "proto/wire_limits.h"
#include "server/service/request_validation.h"
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

}  // namespace

TuneDbService::TuneDbService(TuningCore* core, Options options)
    : core_(core), options_(std::move(options)), started_(absl::Now()) {}

#define TUNEDB_REFUSE_IF_STOPPING()                      \
  do {                                                   \
    if (stopping_.load()) {                              \
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, \
                          "tunedbd is shutting down");   \
    }                                                    \
  } while (0)

grpc::Status TuneDbService::Lookup(grpc::ServerContext* context,
                                   const v1::LookupRequest* request,
                                   v1::LookupResponse* response) {
  TUNEDB_REFUSE_IF_STOPPING();
  auto run = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(LookupArgs args, ValidateLookup(*request));
    ASSIGN_OR_RETURN(TuneAnswer answer,
                     core_->Lookup(args.key, args.constraints));
    if (answer.choice) {
      ToProto(*answer.choice, response->mutable_choice()->mutable_algo());
    }
    if (!request->choice_only()) {
      ToProto(*answer.record, response->mutable_record());
    }
    response->set_record_id(answer.record->id);
    response->set_measured_at_us(answer.record->measured_at_us);
    return absl::OkStatus();
  };
  return ToGrpcStatus(run());
}

absl::Status TuneDbService::DoTune(grpc::ServerContext* context,
                                   const v1::TuneRequest& request,
                                   v1::TuneResponse* response) {
  ASSIGN_OR_RETURN(TuneArgs args, ValidateTune(request));
  ASSIGN_OR_RETURN(TuneAnswer answer,
                   core_->Tune(args.problem, args.device, args.constraints,
                               request.force(), Deadline(context),
                               [context] { return context->IsCancelled(); }));
  AnswerToProto(answer, response->mutable_choice(), response->mutable_record());
  if (!answer.choice) response->clear_choice();
  response->set_searched(answer.searched);
  return absl::OkStatus();
}

grpc::Status TuneDbService::Tune(grpc::ServerContext* context,
                                 const v1::TuneRequest* request,
                                 v1::TuneResponse* response) {
  TUNEDB_REFUSE_IF_STOPPING();
  return ToGrpcStatus(DoTune(context, *request, response));
}

grpc::Status TuneDbService::TuneBatch(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<v1::TuneBatchResponse, v1::TuneBatchRequest>*
        stream) {
  TUNEDB_REFUSE_IF_STOPPING();
  // The reader (this thread) feeds a bounded queue; a few workers run the
  // Tunes and write answers as they finish, one write at a time.
  struct Item {
    int64_t index;
    v1::TuneRequest request;
  };
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Item> queue;
  bool reading_done = false;
  int64_t received = 0, done = 0;
  std::mutex write_mu;
  bool write_failed = false;
  constexpr size_t kMaxQueued = 256;

  auto worker = [&] {
    for (;;) {
      Item item;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return !queue.empty() || reading_done; });
        if (queue.empty()) return;
        item = std::move(queue.front());
        queue.pop_front();
      }
      cv.notify_all();
      v1::TuneBatchResponse out;
      out.set_index(item.index);
      absl::Status s;
      if (stopping_.load()) {
        s = absl::UnavailableError("tunedbd is shutting down");
      } else {
        s = DoTune(context, item.request, out.mutable_response());
      }
      SetStatusFields(s, &out);
      if (!s.ok()) out.clear_response();
      std::lock_guard<std::mutex> wlock(write_mu);
      {
        std::lock_guard<std::mutex> lock(mu);
        out.set_done(++done);
        out.set_received(received);
      }
      if (!write_failed && !stream->Write(out)) write_failed = true;
    }
  };
  std::vector<std::thread> workers;
  for (int i = 0; i < std::max(1, options_.batch_parallelism); ++i) {
    workers.emplace_back(worker);
  }
  v1::TuneBatchRequest in;
  while (stream->Read(&in)) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return queue.size() < kMaxQueued; });
    queue.push_back(Item{received++, std::move(*in.mutable_request())});
    cv.notify_all();
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    reading_done = true;
  }
  cv.notify_all();
  for (auto& t : workers) t.join();
  if (context->IsCancelled()) {
    return grpc::Status(grpc::StatusCode::CANCELLED, "client cancelled");
  }
  return grpc::Status::OK;
}

grpc::Status TuneDbService::Query(grpc::ServerContext* context,
                                  const v1::QueryRequest* request,
                                  grpc::ServerWriter<v1::Record>* writer) {
  TUNEDB_REFUSE_IF_STOPPING();
  auto run = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(QueryArgs args, ValidateQuery(*request));
    LogIfItScans(args.filter);
    std::function<bool(const BadRow&)> report;
    if (request->report_bad_rows()) {
      report = [&](const BadRow& bad) {
        if (context->IsCancelled()) return false;
        v1::Record out;
        out.set_id(bad.id);
        BadRowToProto(bad, out.mutable_unreadable());
        return writer->Write(out);
      };
    }
    return WithRepairHint(core_->store().Query(
        args.filter, args.after_id, args.limit,
        [&](const Record& r) {
          if (context->IsCancelled()) return false;
          v1::Record out;
          ToProto(r, &out);
          return writer->Write(out);
        },
        report));
  };
  return ToGrpcStatus(run());
}

grpc::Status TuneDbService::Devices(grpc::ServerContext* context,
                                    const v1::DevicesRequest* request,
                                    v1::DevicesResponse* response) {
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
  return grpc::Status::OK;
}

grpc::Status TuneDbService::Stats(grpc::ServerContext* context,
                                  const v1::StatsRequest* request,
                                  v1::StatsResponse* response) {
  CoreStats s = core_->Stats();
  response->set_records(s.records);
  response->set_hits(s.hits);
  response->set_misses(s.misses);
  response->set_searches(s.searches);
  response->set_search_failures(s.search_failures);
  response->set_coalesced(s.coalesced);
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
  return grpc::Status::OK;
}

grpc::Status TuneDbService::Invalidate(grpc::ServerContext* context,
                                       const v1::InvalidateRequest* request,
                                       v1::InvalidateResponse* response) {
  TUNEDB_REFUSE_IF_STOPPING();
  auto run = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(RecordFilter filter, ValidateInvalidate(*request));
    LogIfItScans(filter);
    ASSIGN_OR_RETURN(int64_t deleted, core_->Invalidate(filter));
    spdlog::info("invalidated {} records", deleted);
    response->set_deleted(deleted);
    return absl::OkStatus();
  };
  return ToGrpcStatus(run());
}

grpc::Status TuneDbService::Export(grpc::ServerContext* context,
                                   const v1::ExportRequest* request,
                                   grpc::ServerWriter<v1::ExportLine>* writer) {
  TUNEDB_REFUSE_IF_STOPPING();
  auto run = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(RecordFilter filter, ValidateExport(*request));
    LogIfItScans(filter);
    std::function<bool(const BadRow&)> skip;
    if (request->skip_bad_rows()) {
      skip = [&](const BadRow& bad) {
        if (context->IsCancelled()) return false;
        spdlog::warn("export skips record {}, which cannot be read: {}", bad.id,
                     bad.reason);
        v1::ExportLine line;
        BadRowToProto(bad, line.mutable_skipped());
        return writer->Write(line);
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
          return writer->Write(line);
        },
        skip));
  };
  return ToGrpcStatus(run());
}

grpc::Status TuneDbService::Import(grpc::ServerContext* context,
                                   grpc::ServerReader<v1::ImportLine>* reader,
                                   v1::ImportResponse* response) {
  TUNEDB_REFUSE_IF_STOPPING();
  // Each line is parsed and staged as it arrives (Store::StagedImport), so
  // the daemon holds one batch of records, never the whole import; nothing
  // reaches the records table before the whole stream has arrived, valid.
  absl::StatusOr<std::unique_ptr<Store::StagedImport>> import =
      core_->BeginImport();
  if (!import.ok()) return ToGrpcStatus(import.status());
  v1::ImportLine line;
  int64_t n = 0;
  int64_t expected = 0;
  int64_t rejected = 0;
  // All or nothing: after a bad line nothing is staged any more, but the
  // rest is still read for its rejects.
  auto reject = [&](int64_t line_number, absl::string_view reason) {
    if (++rejected > kMaxImportRejectsListed) return;
    v1::ImportResponse::Reject* out = response->add_rejects();
    out->set_line(line_number);
    out->set_reason(std::string(reason));
  };
  while (reader->Read(&line)) {
    ++n;
    if (n == 1) {
      expected = line.expected_lines();
      absl::Status length =
          ValidateImportLength(expected, options_.max_import_lines);
      if (!length.ok()) return ToGrpcStatus(length);
    }
    if (n > options_.max_import_lines) {
      return grpc::Status(
          grpc::StatusCode::RESOURCE_EXHAUSTED,
          absl::StrCat("import is larger than ", options_.max_import_lines,
                       " lines; split the file"));
    }
    absl::StatusOr<Record> r = ValidateImportLine(line);
    if (!r.ok()) {
      reject(n, r.status().message());
      continue;
    }
    if (rejected > 0) continue;
    absl::Status staged = (*import)->Add(*r);
    if (staged.code() == absl::StatusCode::kInvalidArgument) {
      reject(n, staged.message());
    } else if (!staged.ok()) {
      return ToGrpcStatus(staged);
    }
  }
  // Read() ends the same way for a finished stream and a broken one (the
  // client killed, a message over the size limit): only a finished one is
  // imported, so a broken import stores nothing (the staged records are
  // discarded with `import`).
  if (context->IsCancelled() || (expected > 0 && n != expected)) {
    spdlog::warn("import stream broke after {} lines; nothing imported", n);
    return grpc::Status(grpc::StatusCode::CANCELLED,
                        absl::StrCat("the import stream broke after ", n,
                                     " lines, before its end; nothing was "
                                     "imported"));
  }
  response->set_lines(n);
  response->set_rejected(rejected);
  if (rejected > 0) {
    // All or nothing: a bad file imports nothing.
    response->set_imported(0);
    return grpc::Status::OK;
  }
  const absl::Time commit_start = absl::Now();
  absl::StatusOr<int64_t> stored = core_->CommitImport(**import);
  if (!stored.ok()) return ToGrpcStatus(stored.status());
  response->set_imported(*stored);
  spdlog::info("imported {} records (commit {:.1f} s)", *stored,
               absl::ToDoubleSeconds(absl::Now() - commit_start));
  return grpc::Status::OK;
}

grpc::Status TuneDbService::CheckRecords(grpc::ServerContext* context,
                                         const v1::CheckRecordsRequest* request,
                                         v1::CheckRecordsResponse* response) {
  TUNEDB_REFUSE_IF_STOPPING();
  int64_t checked = 0;
  absl::Status s = core_->store().Query(
      RecordFilter(), 0, 0,
      [&](const Record&) {
        ++checked;
        return !context->IsCancelled();
      },
      [&](const BadRow& bad) {
        ++checked;
        BadRowToProto(bad, response->add_bad_rows());
        return !context->IsCancelled();
      });
  if (!s.ok()) return ToGrpcStatus(s);
  if (context->IsCancelled()) {
    return grpc::Status(grpc::StatusCode::CANCELLED, "client cancelled");
  }
  response->set_checked(checked);
  return grpc::Status::OK;
}

grpc::Status TuneDbService::QuarantineRecords(
    grpc::ServerContext* context, const v1::QuarantineRecordsRequest* request,
    v1::QuarantineRecordsResponse* response) {
  TUNEDB_REFUSE_IF_STOPPING();
  absl::StatusOr<std::vector<BadRow>> moved =
      core_->store().QuarantineBadRows();
  if (!moved.ok()) return ToGrpcStatus(moved.status());
  for (const BadRow& bad : *moved) {
    spdlog::warn("quarantined record {}, which cannot be read: {}", bad.id,
                 bad.reason);
    BadRowToProto(bad, response->add_quarantined());
  }
  return grpc::Status::OK;
}

grpc::Status TuneDbService::ReportCounters(
    grpc::ServerContext* context, const v1::ReportCountersRequest* request,
    v1::ReportCountersResponse* response) {
  TUNEDB_REFUSE_IF_STOPPING();
  absl::StatusOr<std::map<std::string, int64_t>> counts =
      ValidateReportCounters(*request);
  if (!counts.ok()) return ToGrpcStatus(counts.status());
  core_->reported().Add(*counts);
  return grpc::Status::OK;
}

}  // namespace tunedb
