#include "server/worker/worker_protocol.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "proto/convert.h"
#include "proto/grpc_status.h"

namespace tunedb {
namespace {

absl::Status SendAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(
          absl::StrCat("send to worker socket: ", std::strerror(errno)));
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

// Reads exactly `size` bytes before `deadline`.
absl::Status RecvAll(int fd, char* data, size_t size, absl::Time deadline,
                     bool* got_any) {
  while (size > 0) {
    const absl::Duration left = deadline - absl::Now();
    int timeout_ms = -1;
    if (deadline != absl::InfiniteFuture()) {
      if (left <= absl::ZeroDuration()) {
        return absl::DeadlineExceededError("worker did not answer in time");
      }
      timeout_ms = static_cast<int>(std::min<int64_t>(
          absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))),
          1 << 30));
    }
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, timeout_ms);
    if (r < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(
          absl::StrCat("poll on worker socket: ", std::strerror(errno)));
    }
    if (r == 0) continue;  // re-check the deadline
    const ssize_t n = ::recv(fd, data, size, 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return absl::UnavailableError(
          absl::StrCat("recv from worker socket: ", std::strerror(errno)));
    }
    if (n == 0) {
      return absl::OutOfRangeError(*got_any ? "worker closed mid-frame"
                                            : "worker closed the connection");
    }
    *got_any = true;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteFrame(int fd, const google::protobuf::MessageLite& message) {
  std::string body;
  if (!message.SerializeToString(&body)) {
    return absl::InternalError("cannot serialize worker message");
  }
  if (body.size() > kMaxFrameBytes) {
    return absl::InternalError("worker message too large");
  }
  const uint32_t n = static_cast<uint32_t>(body.size());
  const char header[4] = {
      static_cast<char>(n & 0xff), static_cast<char>((n >> 8) & 0xff),
      static_cast<char>((n >> 16) & 0xff), static_cast<char>((n >> 24) & 0xff)};
  std::string frame(header, 4);
  frame += body;
  return SendAll(fd, frame.data(), frame.size());
}

absl::Status ReadFrame(int fd, google::protobuf::MessageLite* message,
                       absl::Time deadline) {
  unsigned char header[4];
  bool got_any = false;
  absl::Status s =
      RecvAll(fd, reinterpret_cast<char*>(header), 4, deadline, &got_any);
  if (!s.ok()) return s;
  const uint32_t n = header[0] | (header[1] << 8) | (header[2] << 16) |
                     (static_cast<uint32_t>(header[3]) << 24);
  if (n > kMaxFrameBytes) {
    return absl::DataLossError(absl::StrCat("worker frame of ", n, " bytes"));
  }
  std::string body(n, '\0');
  s = RecvAll(fd, body.data(), n, deadline, &got_any);
  if (!s.ok()) return s;
  if (!message->ParseFromString(body)) {
    return absl::DataLossError("malformed worker message");
  }
  return absl::OkStatus();
}

void ToProto(const DeviceInfo& info, worker::DeviceInfo* out) {
  tunedb::ToProto(info.key, out->mutable_key());
  out->set_ordinal(info.ordinal);
  out->set_uuid(info.uuid);
  out->set_driver_version(info.driver_version);
  out->set_total_memory_bytes(info.total_memory_bytes);
  out->set_mig(info.mig);
}

absl::StatusOr<DeviceInfo> FromProto(const worker::DeviceInfo& in) {
  DeviceInfo info;
  absl::StatusOr<DeviceKey> key = tunedb::FromProto(in.key());
  if (!key.ok()) {
    return absl::DataLossError(
        absl::StrCat("worker sent a bad device key: ", key.status().message()));
  }
  info.key = *std::move(key);
  info.ordinal = in.ordinal();
  info.uuid = in.uuid();
  info.driver_version = in.driver_version();
  info.total_memory_bytes = in.total_memory_bytes();
  info.mig = in.mig();
  return info;
}

void ToProto(const SearchResult& result, worker::Response* out) {
  for (const AlgoResult& r : result.results) {
    tunedb::ToProto(r, out->add_results());
  }
  out->set_repeats(result.repeats);
  out->set_workspace_cap_bytes(result.workspace_cap_bytes);
  out->set_verified(result.verified);
  const SearchPhases& p = result.phases;
  worker::Phases* phases = out->mutable_phases();
  phases->set_setup_ms(p.setup_ms);
  phases->set_find_ms(p.find_ms);
  phases->set_heuristics_ms(p.heuristics_ms);
  phases->set_screen_ms(p.screen_ms);
  phases->set_retime_ms(p.retime_ms);
  phases->set_verify_ms(p.verify_ms);
  phases->set_plans_loaded(p.plans_loaded);
}

absl::StatusOr<SearchResult> FromProto(const worker::Response& in) {
  SearchResult result;
  for (const v1::AlgoResult& a : in.results()) {
    absl::StatusOr<AlgoResult> r = tunedb::FromProto(a);
    if (!r.ok()) {
      return absl::DataLossError(
          absl::StrCat("worker sent a bad result: ", r.status().message()));
    }
    result.results.push_back(*std::move(r));
  }
  result.repeats = in.repeats();
  result.workspace_cap_bytes = in.workspace_cap_bytes();
  result.verified = in.verified();
  const worker::Phases& phases = in.phases();
  result.phases.setup_ms = phases.setup_ms();
  result.phases.find_ms = phases.find_ms();
  result.phases.heuristics_ms = phases.heuristics_ms();
  result.phases.screen_ms = phases.screen_ms();
  result.phases.retime_ms = phases.retime_ms();
  result.phases.verify_ms = phases.verify_ms();
  result.phases.plans_loaded = phases.plans_loaded();
  return result;
}

void SetStatus(const absl::Status& status, worker::Response* out) {
  SetStatusFields(status, out);
}

absl::Status GetStatus(const worker::Response& response) {
  return StatusFromFields(response);
}

}  // namespace tunedb
