// Conversions between absl::Status and grpc::Status, and between
// absl::Status and the `code` and `message` fields of a message that carries
// one per item (TuneBatchResponse, the worker protocol's Response): the one
// mapping used by the service, the worker protocol, the client library, the
// CLI and the tests. absl and gRPC share their code numbering (checked at
// compile time), so a code and its message survive every round trip; an OK
// status carries no message. A message longer than kMaxStatusMessageBytes
// (proto/wire_limits.h) is cut there, saying so, on its way out.
//
// Thread safety: stateless functions.
#ifndef TUNEDB_PROTO_GRPC_STATUS_H_
#define TUNEDB_PROTO_GRPC_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "grpcpp/support/status.h"

namespace tunedb {

grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

// `message`, cut to kMaxStatusMessageBytes (saying so) where longer.
std::string BoundedStatusMessage(absl::string_view message);

// Sets out->code() (0 for OK) and out->message() (bounded).
template <typename Message>
void SetStatusFields(const absl::Status& status, Message* out) {
  out->set_code(static_cast<int>(status.code()));
  out->set_message(BoundedStatusMessage(status.message()));
}

// The status that in.code() and in.message() carry. A code that is not one
// of absl's (from a newer or broken peer) reads as UNKNOWN, with its message.
template <typename Message>
absl::Status StatusFromFields(const Message& in) {
  if (in.code() == 0) return absl::OkStatus();
  if (in.code() < 0 ||
      in.code() > static_cast<int>(absl::StatusCode::kUnauthenticated)) {
    return absl::UnknownError(in.message());
  }
  return absl::Status(static_cast<absl::StatusCode>(in.code()), in.message());
}

}  // namespace tunedb

#endif  // TUNEDB_PROTO_GRPC_STATUS_H_
