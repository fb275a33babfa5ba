// Conversions between absl::Status and grpc::Status: the one mapping used by
// the service (answers), the client library and the CLI (replies), and the
// tests. The two share their code numbering (checked at compile time), so a
// code and its message survive the round trip; an OK status carries no
// message either way.
//
// Thread safety: stateless functions.
#ifndef TUNEDB_PROTO_GRPC_STATUS_H_
#define TUNEDB_PROTO_GRPC_STATUS_H_

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace tunedb {

grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace tunedb

#endif  // TUNEDB_PROTO_GRPC_STATUS_H_
