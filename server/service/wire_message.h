// Reading request messages that the service takes as bytes: a message that
// does not parse is INVALID_ARGUMENT naming the message type and its place in
// the stream. Used by TuneDbService for every request it reads, and by the
// stream fuzzer, so a malformed message is never INTERNAL with no message nor
// the silent end of a stream. And the one deterministic serialization of a
// message (the job's kept answers, the Lookups a program made).
//
// Thread safety: stateless functions.
#ifndef TUNEDB_SERVER_SERVICE_WIRE_MESSAGE_H_
#define TUNEDB_SERVER_SERVICE_WIRE_MESSAGE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/message_lite.h"
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

// `message`'s bytes, written deterministically (map entries in key order):
// equal messages give equal bytes.
inline std::string DeterministicBytes(
    const google::protobuf::MessageLite& message) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return out;
}

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SERVICE_WIRE_MESSAGE_H_
