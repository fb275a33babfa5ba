// ImportSession: one Import stream on its way into the store, message by
// message. All or nothing whatever the client: a message that does not
// parse, a line that is not UTF-8 or not a valid record, is rejected by its
// line number and nothing is stored; a stream that ends short of the lines
// its first message announced, or that gRPC reports cancelled, stores
// nothing either. Each good line is staged as it arrives (Store::StagedImport),
// so memory stays bounded.
//
// Thread safety: one thread at a time (the Import call's).
#ifndef TUNEDB_SERVER_SERVICE_IMPORT_SESSION_H_
#define TUNEDB_SERVER_SERVICE_IMPORT_SESSION_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/byte_buffer.h"
#include "server/tuning/tuning_core.h"
#include "store/store.h"
#include "tunedb/v1/tunedb.pb.h"

namespace tunedb {

class ImportSession {
 public:
  // Stages into `staged`; commits through `core`, which must outlive it.
  ImportSession(TuningCore& core, std::unique_ptr<Store::StagedImport> staged,
                int64_t max_lines);

  // Takes the stream's next message. A rejected line is kept for the
  // response and is not an error; an error (a first line announcing too
  // many lines, a stream over the line limit, a failing store) ends the
  // import, and is the call's status. A first line naming an import that
  // committed before is ALREADY_EXISTS.
  absl::Status Take(grpc::ByteBuffer* message);

  // After the stream ended: CANCELLED (nothing stored) unless it ended as a
  // whole (`cancelled` false, and as many lines as announced); then commits
  // unless a line was rejected, and fills `response`.
  absl::Status Finish(bool cancelled, v1::ImportResponse* response);

  int64_t lines() const { return lines_; }

 private:
  absl::Status TakeHeader(const v1::ImportLine& first);
  void Reject(absl::string_view reason);

  TuningCore& core_;
  std::unique_ptr<Store::StagedImport> staged_;
  const int64_t max_lines_;
  int64_t lines_ = 0;
  int64_t expected_ = 0;
  std::string import_id_;
  int64_t rejected_ = 0;
  v1::ImportResponse rejects_;  // the first kMaxImportRejectsListed
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SERVICE_IMPORT_SESSION_H_
