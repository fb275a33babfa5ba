// Fuzz target: the worker protocol (server/worker/worker_protocol.cc). The
// bytes after the first arrive on a Unix socket, which then closes, and are
// read frame by frame with ReadFrame, as the daemon reads a worker's
// Responses (first byte even) or a worker reads its Requests (odd); each
// message is then decoded as its reader decodes it. Properties: reading
// ends with end of file or a malformed frame, never anything else; a
// decoded search result, device or status converts back to the same value;
// and a frame written with WriteFrame reads back as the same message.
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "google/protobuf/stubs/logging.h"
#include "server/worker/worker_protocol.h"
#include "tests/fuzz/fuzz_check.h"
#include "tunedb/problem.h"

namespace {

using namespace tunedb;  // NOLINT(build/namespaces): a fuzz target's file

// Malformed input is the point here: leave protobuf's parse errors unsaid.
[[maybe_unused]] const bool kProtobufQuiet =
    (google::protobuf::SetLogHandler(nullptr), true);

// WriteFrame(message) on `fds` (a connected pair) reads back as the same
// bytes.
template <typename M>
void CheckFrameRoundTrip(const M& message, const int fds[2]) {
  FUZZ_CHECK(WriteFrame(fds[0], message).ok());
  M back;
  FUZZ_CHECK(ReadFrame(fds[1], &back, absl::InfiniteFuture()).ok());
  FUZZ_CHECK(back.SerializeAsString() == message.SerializeAsString());
}

// What WorkerSupervisor does with a Response (hello or search answer).
void DecodeResponse(const worker::Response& response, const int loop[2]) {
  const absl::Status status = GetStatus(response);
  FUZZ_CHECK(status.ok() == (response.code() == 0));
  worker::Response status_only;
  SetStatus(status, &status_only);
  FUZZ_CHECK(GetStatus(status_only) == status);
  for (const worker::DeviceInfo& d : response.devices()) {
    absl::StatusOr<DeviceInfo> info = FromProto(d);
    if (!info.ok()) continue;
    FUZZ_CHECK(info->key.Validate().ok());
    worker::DeviceInfo wire;
    ToProto(*info, &wire);
    absl::StatusOr<DeviceInfo> back = FromProto(wire);
    FUZZ_CHECK(back.ok());
    FUZZ_CHECK(back->key == info->key && back->uuid == info->uuid &&
               back->ordinal == info->ordinal &&
               back->driver_version == info->driver_version &&
               back->total_memory_bytes == info->total_memory_bytes &&
               back->mig == info->mig);
  }
  absl::StatusOr<SearchResult> result = FromProto(response);
  if (result.ok()) {
    worker::Response wire;
    ToProto(*result, &wire);
    absl::StatusOr<SearchResult> back = FromProto(wire);
    FUZZ_CHECK(back.ok());
    FUZZ_CHECK(back->results == result->results);
    FUZZ_CHECK(back->repeats == result->repeats);
    FUZZ_CHECK(back->workspace_cap_bytes == result->workspace_cap_bytes);
    FUZZ_CHECK(back->verified == result->verified);
  }
  CheckFrameRoundTrip(response, loop);
}

// What tunedb-worker does with a Request before it searches.
void DecodeRequest(const worker::Request& request, const int loop[2]) {
  absl::StatusOr<ConvProblem> problem = ConvProblem::Parse(request.problem());
  if (problem.ok()) {
    FUZZ_CHECK(problem->Validate().ok());
    FUZZ_CHECK(ConvProblem::Parse(problem->ToText()).value() == *problem);
  }
  CheckFrameRoundTrip(request, loop);
}

// A frame that announces more bytes than follow it can only be read as cut
// short, whatever the size it announces (up to kMaxFrameBytes); ReadFrame
// allocates that size first. Such a header is made to announce one byte
// more than follows, so that the run spends its time decoding rather than
// clearing 16 MiB buffers; every path of ReadFrame stays reachable.
std::string CutShortFramesSmall(std::string bytes) {
  size_t at = 0;
  while (at + 4 <= bytes.size()) {
    const auto byte = [&](size_t i) {
      return static_cast<uint32_t>(static_cast<unsigned char>(bytes[at + i]));
    };
    const uint32_t n = byte(0) | byte(1) << 8 | byte(2) << 16 | byte(3) << 24;
    const size_t left = bytes.size() - at - 4;
    if (n > kMaxFrameBytes) break;  // refused before any allocation
    if (n > left) {
      const uint32_t m = static_cast<uint32_t>(left) + 1;
      for (size_t i = 0; i < 4; ++i) {
        bytes[at + i] = static_cast<char>((m >> (8 * i)) & 0xff);
      }
      break;
    }
    at += 4 + n;
  }
  return bytes;
}

template <typename M, typename Decode>
void ReadAll(int fd, const int loop[2], Decode decode) {
  for (;;) {
    M message;
    const absl::Status s = ReadFrame(fd, &message, absl::InfiniteFuture());
    if (!s.ok()) {
      FUZZ_CHECK(absl::IsOutOfRange(s) || absl::IsDataLoss(s));
      return;
    }
    decode(message, loop);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The socket's buffer (over 200 KiB) holds the whole input, so one thread
  // can write it all before reading.
  if (size == 0 || size > 65536) return 0;
  const bool requests = (data[0] & 1) != 0;
  const std::string bytes = CutShortFramesSmall(
      std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
  int fds[2], loop[2];
  FUZZ_CHECK(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
  FUZZ_CHECK(::socketpair(AF_UNIX, SOCK_STREAM, 0, loop) == 0);
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n =
        ::write(fds[0], bytes.data() + written, bytes.size() - written);
    FUZZ_CHECK(n > 0);
    written += static_cast<size_t>(n);
  }
  ::close(fds[0]);
  if (requests) {
    ReadAll<worker::Request>(fds[1], loop, DecodeRequest);
  } else {
    ReadAll<worker::Response>(fds[1], loop, DecodeResponse);
  }
  ::close(fds[1]);
  ::close(loop[0]);
  ::close(loop[1]);
  return 0;
}
