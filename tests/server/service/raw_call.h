// RawCall: one call of any TuneDb method with hand-built message bytes,
// through gRPC's generic stub: what a client other than ours may send (a
// message that does not parse, no expected_lines, ...). Sends every message,
// closes its side, reads every answer, and returns them with the status.
//
// Thread safety: one call per thread.
#ifndef TUNEDB_TESTS_SERVER_RAW_CALL_H_
#define TUNEDB_TESTS_SERVER_RAW_CALL_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/support/byte_buffer.h"

namespace tunedb::testing_util {

struct RawReply {
  grpc::Status status;
  std::vector<std::string> messages;  // the serialized answers
};

inline grpc::ByteBuffer ToByteBuffer(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

inline std::string FromByteBuffer(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string out;
  if (!buffer.Dump(&slices).ok()) return out;
  for (const grpc::Slice& s : slices) {
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return out;
}

// `method` as "/tunedb.v1.TuneDb/Import".
inline RawReply RawCall(const std::shared_ptr<grpc::Channel>& channel,
                        const std::string& method,
                        const std::vector<std::string>& messages) {
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(30));
  RawReply reply;
  // Each step waits for its own completion: one operation in flight.
  auto wait = [&cq] {
    void* tag = nullptr;
    bool ok = false;
    return cq.Next(&tag, &ok) && ok;
  };
  auto call = stub.PrepareCall(&context, method, &cq);
  call->StartCall(nullptr);
  bool open = wait();
  for (const std::string& m : messages) {
    if (!open) break;
    call->Write(ToByteBuffer(m), nullptr);
    open = wait();
  }
  if (open) {
    call->WritesDone(nullptr);
    wait();
  }
  for (;;) {
    grpc::ByteBuffer in;
    call->Read(&in, nullptr);
    if (!wait()) break;
    reply.messages.push_back(FromByteBuffer(in));
  }
  call->Finish(&reply.status, nullptr);
  wait();
  cq.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (cq.Next(&tag, &ok)) {
  }
  return reply;
}

}  // namespace tunedb::testing_util

#endif  // TUNEDB_TESTS_SERVER_RAW_CALL_H_
