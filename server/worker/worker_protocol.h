// The framing and conversions of the WorkerSupervisor <-> tunedb-worker
// protocol (server/worker/worker.proto): every message is a 4-byte
// little-endian length and the serialized message, over a Unix stream socket.
//
// Thread safety: stateless functions; one reader and one writer per socket.
#ifndef TUNEDB_SERVER_WORKER_WORKER_PROTOCOL_H_
#define TUNEDB_SERVER_WORKER_WORKER_PROTOCOL_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/finder/finder.h"
#include "server/worker/worker.pb.h"

namespace google::protobuf {
class MessageLite;
}

namespace tunedb {

// Largest frame accepted (a search response is a few KiB).
inline constexpr uint32_t kMaxFrameBytes = 16u << 20;

// Writes one frame. UNAVAILABLE if the peer is gone (never raises SIGPIPE).
absl::Status WriteFrame(int fd, const google::protobuf::MessageLite& message);

// Reads one frame before `deadline`. DEADLINE_EXCEEDED on timeout (the frame
// may be half read: the connection is then unusable), OUT_OF_RANGE on end of
// file, DATA_LOSS on a malformed frame, UNAVAILABLE on a socket error.
absl::Status ReadFrame(int fd, google::protobuf::MessageLite* message,
                       absl::Time deadline);

// Conversions between the domain types and the protocol messages.
void ToProto(const DeviceInfo& info, worker::DeviceInfo* out);
absl::StatusOr<DeviceInfo> FromProto(const worker::DeviceInfo& info);
void ToProto(const SearchResult& result, worker::Response* out);
absl::StatusOr<SearchResult> FromProto(const worker::Response& response);

// Status <-> (code, message) of a Response.
void SetStatus(const absl::Status& status, worker::Response* out);
absl::Status GetStatus(const worker::Response& response);

}  // namespace tunedb

#endif  // TUNEDB_SERVER_WORKER_WORKER_PROTOCOL_H_
