// Reading request messages that the service takes as bytes: a message that
// does not parse is INVALID_ARGUMENT naming the message type and its place in
// the stream. Used by TuneDbService for every request it reads, and by the
// stream fuzzer, so a malformed message is never INTERNAL with no message nor
// the silent end of a stream.
//
// Thread safety: stateless functions.
#ifndef TUNEDB_SERVER_SERVICE_WIRE_MESSAGE_H_
#define TUNEDB_SERVER_SERVICE_WIRE_MESSAGE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/proto_buffer_reader.h"

namespace tunedb {

// INVALID_ARGUMENT: the request (or, for `index` > 0, the index-th message
// of a request stream, from 1) is not a valid message of type Message.
template <class Message>
absl::Status MalformedMessage(int64_t index = 0) {
  const std::string name = Message::descriptor()->full_name();
  if (index <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the request is not a valid ", name,
        " message (malformed, or a string field that is not UTF-8)"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "message ", index, " of the stream is not a valid ", name,
      " message (malformed, or a string field that is not UTF-8)"));
}

// Parses `buffer` (consumed) into `out`; MalformedMessage<Message>(index) if
// it does not parse.
template <class Message>
absl::Status ParseWireMessage(grpc::ByteBuffer* buffer, int64_t index,
                              Message* out) {
  grpc::ProtoBufferReader reader(buffer);
  if (!out->ParseFromZeroCopyStream(&reader)) {
    return MalformedMessage<Message>(index);
  }
  buffer->Clear();
  return absl::OkStatus();
}

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SERVICE_WIRE_MESSAGE_H_
