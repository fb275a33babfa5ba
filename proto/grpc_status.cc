#include "proto/grpc_status.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "proto/wire_limits.h"

namespace tunedb {
namespace {

// The conversions below are casts: every code must have one number in both.
constexpr bool SameNumber(absl::StatusCode a, grpc::StatusCode g) {
  return static_cast<int>(a) == static_cast<int>(g);
}
static_assert(SameNumber(absl::StatusCode::kOk, grpc::StatusCode::OK));
static_assert(SameNumber(absl::StatusCode::kCancelled,
                         grpc::StatusCode::CANCELLED));
static_assert(SameNumber(absl::StatusCode::kUnknown,
                         grpc::StatusCode::UNKNOWN));
static_assert(SameNumber(absl::StatusCode::kInvalidArgument,
                         grpc::StatusCode::INVALID_ARGUMENT));
static_assert(SameNumber(absl::StatusCode::kDeadlineExceeded,
                         grpc::StatusCode::DEADLINE_EXCEEDED));
static_assert(SameNumber(absl::StatusCode::kNotFound,
                         grpc::StatusCode::NOT_FOUND));
static_assert(SameNumber(absl::StatusCode::kAlreadyExists,
                         grpc::StatusCode::ALREADY_EXISTS));
static_assert(SameNumber(absl::StatusCode::kPermissionDenied,
                         grpc::StatusCode::PERMISSION_DENIED));
static_assert(SameNumber(absl::StatusCode::kResourceExhausted,
                         grpc::StatusCode::RESOURCE_EXHAUSTED));
static_assert(SameNumber(absl::StatusCode::kFailedPrecondition,
                         grpc::StatusCode::FAILED_PRECONDITION));
static_assert(SameNumber(absl::StatusCode::kAborted,
                         grpc::StatusCode::ABORTED));
static_assert(SameNumber(absl::StatusCode::kOutOfRange,
                         grpc::StatusCode::OUT_OF_RANGE));
static_assert(SameNumber(absl::StatusCode::kUnimplemented,
                         grpc::StatusCode::UNIMPLEMENTED));
static_assert(SameNumber(absl::StatusCode::kInternal,
                         grpc::StatusCode::INTERNAL));
static_assert(SameNumber(absl::StatusCode::kUnavailable,
                         grpc::StatusCode::UNAVAILABLE));
static_assert(SameNumber(absl::StatusCode::kDataLoss,
                         grpc::StatusCode::DATA_LOSS));
static_assert(SameNumber(absl::StatusCode::kUnauthenticated,
                         grpc::StatusCode::UNAUTHENTICATED));

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      BoundedStatusMessage(status.message()));
}

std::string BoundedStatusMessage(absl::string_view message) {
  std::string text(message.substr(0, kMaxStatusMessageBytes));
  if (message.size() > kMaxStatusMessageBytes) {
    absl::StrAppend(&text, "... (", message.size(), " bytes, cut)");
  }
  return text;
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

}  // namespace tunedb
