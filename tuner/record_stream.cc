#include "tuner/record_stream.h"

#include <algorithm>

#include "proto/grpc_status.h"

namespace tunedb::cli {

absl::Status ForEachRecord(
    CliContext& ctx, const v1::Filter& filter, int64_t after_id, int64_t limit,
    const std::function<bool(const v1::Record&)>& visit) {
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
    auto context = ctx.NewContext();
    auto reader = (*stub)->Query(context.get(), request);
    v1::Record record;
    int64_t page = 0;
    bool stopped = false;
    while (reader->Read(&record)) {
      ++page;
      ++seen;
      after_id = record.id();
      if (!visit(record)) {
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

}  // namespace tunedb::cli
