#include "tuner/cli_context.h"

#include <algorithm>
#include <cctype>
#include <ostream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "proto/convert.h"
#include "proto/grpc_status.h"
#include "proto/tls_credentials.h"
#include "proto/wire_limits.h"
#include "tuner/exit_codes.h"

namespace tunedb::tuner {
namespace {

constexpr double kConnectTimeoutS = 5;

std::chrono::system_clock::time_point DeadlineIn(double seconds) {
  return std::chrono::system_clock::now() +
         std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

}  // namespace

int ExitCodeFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return kExitOk;
    case absl::StatusCode::kUnavailable:
      return kExitUnreachable;
    case absl::StatusCode::kInvalidArgument:
      return kExitUsage;
    case absl::StatusCode::kNotFound:
      return kExitNotFound;
    case absl::StatusCode::kDataLoss:
      return kExitUnreadable;
    default:
      return kExitError;
  }
}

int CliContext::Fail(const absl::Status& status) {
  err() << "tunedb: error: " << status.message() << "\n";
  return ExitCodeFor(status);
}

absl::StatusOr<v1::TuneDb::Stub*> CliContext::Stub() {
  if (stub_ != nullptr) return stub_.get();
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kCliMaxReceiveBytes);
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      CreateDaemonChannel(options_.address, options_.tls, args);
  if (!channel.ok()) return channel.status();
  channel_ = *std::move(channel);
  // Connecting waits at most kConnectTimeoutS (or --timeout if shorter), so
  // a daemon that is not running is reported promptly.
  if (!channel_->WaitForConnected(
          DeadlineIn(std::min(options_.timeout_s, kConnectTimeoutS)))) {
    channel_.reset();
    const char* hint =
        UsesTls(options_.address, options_.tls)
            ? " over TLS (is it running, and do --tls-ca and the client "
              "certificate match its certificates?)"
            : " (is it running? set --address or TUNEDB_ADDRESS; a daemon "
              "on TCP with TLS needs --tls-ca)";
    return absl::UnavailableError(
        absl::StrCat("cannot reach tunedbd at ", options_.address, hint));
  }
  stub_ = v1::TuneDb::NewStub(channel_);
  return stub_.get();
}

std::unique_ptr<grpc::ClientContext> CliContext::NewContext() const {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(DeadlineIn(options_.timeout_s));
  return context;
}

std::unique_ptr<grpc::ClientContext> CliContext::NewStreamContext() const {
  return std::make_unique<grpc::ClientContext>();
}

absl::StatusOr<DeviceKey> CliContext::ResolveDevice(
    const std::string& gpu, int* matching,
    const std::function<bool(const DeviceKey&)>& accept,
    std::string* driver_version) {
  auto stub = Stub();
  if (!stub.ok()) return stub.status();
  v1::DevicesResponse devices;
  auto context = NewContext();
  absl::Status status = FromGrpcStatus(
      (*stub)->Devices(context.get(), v1::DevicesRequest(), &devices));
  if (!status.ok()) return status;
  if (devices.devices().empty()) {
    return absl::FailedPreconditionError("the daemon serves no GPU");
  }
  int ordinal = -1;
  const bool by_ordinal = !gpu.empty() && absl::SimpleAtoi(gpu, &ordinal);
  for (const v1::DeviceInfo& info : devices.devices()) {
    const bool match =
        gpu.empty() || (by_ordinal && info.ordinal() == ordinal) ||
        (!by_ordinal &&
         absl::StrContains(absl::AsciiStrToLower(info.key().gpu_model()),
                           absl::AsciiStrToLower(gpu)));
    if (!match) continue;
    absl::StatusOr<DeviceKey> key = FromProto(info.key());
    if (!key.ok()) return key.status();
    if (accept && !accept(*key)) continue;
    if (driver_version != nullptr) *driver_version = info.driver_version();
    if (matching != nullptr) {
      *matching = 0;
      for (const v1::DeviceInfo& other : devices.devices()) {
        if (other.key().SerializeAsString() == info.key().SerializeAsString()) {
          ++*matching;
        }
      }
    }
    return *std::move(key);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--gpu '", gpu, "' matches none of the daemon's ",
      devices.devices_size(), " GPU(s)",
      accept ? " that serve the cuDNN version asked for" : "",
      "; see `tunedb devices`"));
}

absl::StatusOr<ProblemKey> CliContext::ResolveKey(const std::string& text,
                                                  const std::string& gpu) {
  const std::string trimmed(absl::StripAsciiWhitespace(text));
  if (absl::StartsWith(trimmed, "kv=")) {
    auto key = ProblemKey::Parse(trimmed);
    if (!key.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("KEY: ", key.status().message()));
    }
    return *key;
  }
  auto problem = ConvProblem::Parse(trimmed);
  if (!problem.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "KEY: ", problem.status().message(),
        " (expected the canonical key text \"kv=1 gpu=... op=...\" or a "
        "problem's text \"op=fwd n=... tf32=1\")"));
  }
  ProblemKey key;
  key.problem = *problem;
  auto device = ResolveDevice(gpu);
  if (!device.ok()) return device.status();
  key.device = *device;
  return key;
}

}  // namespace tunedb::tuner
