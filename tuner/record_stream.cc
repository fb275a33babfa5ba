#include "tuner/record_stream.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "proto/convert.h"
#include "proto/grpc_status.h"

namespace tunedb::tuner {

absl::Status ForEachRecord(
    CliContext& ctx, const v1::Filter& filter, int64_t after_id, int64_t limit,
    const std::function<bool(const v1::Record&)>& visit,
    const std::function<bool(const v1::BadRow&)>& bad_row) {
  auto stub = ctx.Stub();
  if (!stub.ok()) return stub.status();
  int64_t seen = 0;
  while (true) {
    v1::QueryRequest request;
    *request.mutable_filter() = filter;
    const int64_t want =
        limit > 0 ? std::min<int64_t>(1000, limit - seen) : 1000;
    request.set_page_size(static_cast<int32_t>(want));
    request.set_after_id(after_id);
    request.set_report_bad_rows(bad_row != nullptr);
    auto context = ctx.NewContext();
    auto reader = (*stub)->Query(context.get(), request);
    v1::Record record;
    int64_t page = 0;
    bool stopped = false;
    while (reader->Read(&record)) {
      ++page;
      ++seen;
      after_id = record.id();
      if (!(record.has_unreadable() ? bad_row(record.unreadable())
                                    : visit(record))) {
        stopped = true;
        context->TryCancel();
        break;
      }
    }
    grpc::Status status = reader->Finish();
    if (stopped) return absl::OkStatus();
    if (!status.ok()) return FromGrpcStatus(status);
    if (page < want || (limit > 0 && seen >= limit)) return absl::OkStatus();
  }
}

void ReportSkipped(CliContext& ctx, const std::vector<v1::BadRow>& skipped) {
  if (skipped.empty()) return;
  for (const v1::BadRow& bad : skipped) {
    ctx.err() << "tunedb: record " << bad.id()
              << " cannot be read: " << bad.reason() << " (key as stored: \""
              << bad.key_text() << "\")\n";
  }
  ctx.err() << "tunedb: " << skipped.size()
            << " unreadable record(s) skipped; `tunedb doctor` lists them, "
               "`tunedb repair` quarantines them\n";
}

absl::Status ForEachParsedRecord(CliContext& ctx, const v1::Filter& filter,
                                 int64_t limit,
                                 const std::function<bool(Record)>& visit,
                                 std::vector<v1::BadRow>* skipped) {
  absl::Status bad;
  std::function<bool(const v1::BadRow&)> bad_row;
  if (skipped != nullptr) {
    bad_row = [skipped](const v1::BadRow& row) {
      skipped->push_back(row);
      return true;
    };
  }
  absl::Status status = ForEachRecord(
      ctx, filter, 0, limit,
      [&](const v1::Record& wire) {
        absl::StatusOr<Record> r = FromProto(wire);
        if (!r.ok()) {
          bad = absl::InternalError(absl::StrCat(
              "record ", wire.id(),
              " from the daemon is malformed: ", r.status().message()));
          return false;
        }
        return visit(*std::move(r));
      },
      bad_row);
  return status.ok() ? bad : status;
}

absl::StatusOr<std::vector<Record>> RecordsMatching(CliContext& ctx,
                                                    const v1::Filter& filter) {
  std::vector<Record> out;
  RETURN_IF_ERROR(ForEachParsedRecord(ctx, filter, 0, [&](Record r) {
    out.push_back(std::move(r));
    return true;
  }));
  return out;
}

}  // namespace tunedb::tuner
