// absl::Status <-> grpc::Status: codes and messages survive both ways, a
// message up to kMaxStatusMessageBytes.
#include "proto/grpc_status.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "proto/wire_limits.h"
#include "tunedb/v1/tunedb.pb.h"

namespace tunedb {
namespace {

constexpr absl::StatusCode kErrorCodes[] = {
    absl::StatusCode::kCancelled,          absl::StatusCode::kUnknown,
    absl::StatusCode::kInvalidArgument,    absl::StatusCode::kDeadlineExceeded,
    absl::StatusCode::kNotFound,           absl::StatusCode::kAlreadyExists,
    absl::StatusCode::kPermissionDenied,   absl::StatusCode::kResourceExhausted,
    absl::StatusCode::kFailedPrecondition, absl::StatusCode::kAborted,
    absl::StatusCode::kOutOfRange,         absl::StatusCode::kUnimplemented,
    absl::StatusCode::kInternal,           absl::StatusCode::kUnavailable,
    absl::StatusCode::kDataLoss,           absl::StatusCode::kUnauthenticated};

TEST(GrpcStatusTest, OkBecomesOkBothWays) {
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  EXPECT_TRUE(FromGrpcStatus(grpc::Status::OK).ok());
}

TEST(GrpcStatusTest, OkGrpcStatusWithAMessageIsPlainOk) {
  const absl::Status s =
      FromGrpcStatus(grpc::Status(grpc::StatusCode::OK, "x"));
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.message(), "");
}

TEST(GrpcStatusTest, EveryErrorKeepsItsCodeAndMessageToGrpc) {
  for (absl::StatusCode code : kErrorCodes) {
    const std::string message =
        absl::StrCat("message for ", absl::StatusCodeToString(code));
    const grpc::Status g = ToGrpcStatus(absl::Status(code, message));
    EXPECT_EQ(static_cast<int>(g.error_code()), static_cast<int>(code));
    EXPECT_EQ(g.error_message(), message);
  }
}

TEST(GrpcStatusTest, EveryErrorKeepsItsCodeAndMessageFromGrpc) {
  for (absl::StatusCode code : kErrorCodes) {
    const std::string message =
        absl::StrCat("message for ", absl::StatusCodeToString(code));
    const absl::Status a = FromGrpcStatus(
        grpc::Status(static_cast<grpc::StatusCode>(code), message));
    EXPECT_EQ(a.code(), code);
    EXPECT_EQ(a.message(), message);
  }
}

TEST(GrpcStatusTest, NamedCodesMatch) {
  EXPECT_EQ(ToGrpcStatus(absl::UnavailableError("down")).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(ToGrpcStatus(absl::InvalidArgumentError("n")).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::IsNotFound(
      FromGrpcStatus(grpc::Status(grpc::StatusCode::NOT_FOUND, "none"))));
  EXPECT_TRUE(absl::IsDeadlineExceeded(FromGrpcStatus(
      grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "late"))));
}

TEST(GrpcStatusTest, RoundTripIsIdentity) {
  for (absl::StatusCode code : kErrorCodes) {
    const absl::Status s(code, "round trip");
    EXPECT_EQ(FromGrpcStatus(ToGrpcStatus(s)), s);
  }
}

TEST(GrpcStatusTest, StatusFieldsOfAMessageRoundTrip) {
  for (absl::StatusCode code : kErrorCodes) {
    const absl::Status s(code, "per item");
    v1::TuneBatchResponse item;
    SetStatusFields(s, &item);
    EXPECT_EQ(item.code(), static_cast<int>(code));
    EXPECT_EQ(item.message(), "per item");
    EXPECT_EQ(StatusFromFields(item), s);
  }
}

TEST(GrpcStatusTest, OkStatusFieldsAreCodeZero) {
  v1::TuneBatchResponse item;
  SetStatusFields(absl::OkStatus(), &item);
  EXPECT_EQ(item.code(), 0);
  EXPECT_EQ(item.message(), "");
  item.set_message("ignored");
  EXPECT_TRUE(StatusFromFields(item).ok());
}

// Found by the worker_frame fuzzer (tests/fuzz/regressions/worker_frame/):
// a code absl does not know gave a status whose code() (UNKNOWN) differed
// from its stored code, so it did not survive SetStatusFields.
TEST(GrpcStatusTest, StatusFieldsWithACodeOutsideAbslsReadAsUnknown) {
  for (int code : {17, 40, -1}) {
    v1::TuneBatchResponse item;
    item.set_code(code);
    item.set_message("from a newer peer");
    const absl::Status s = StatusFromFields(item);
    EXPECT_EQ(s, absl::UnknownError("from a newer peer")) << code;
    v1::TuneBatchResponse again;
    SetStatusFields(s, &again);
    EXPECT_EQ(StatusFromFields(again), s) << code;
  }
}

// A message that repeats an oversized value must not outgrow gRPC's
// metadata limit (the client would see RESOURCE_EXHAUSTED, "retry later").
TEST(GrpcStatusTest, ALongMessageIsCutAndSaysSo) {
  const std::string long_message(100 * 1024, 'x');
  const grpc::Status g = ToGrpcStatus(absl::InvalidArgumentError(long_message));
  EXPECT_EQ(g.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LT(g.error_message().size(), kMaxStatusMessageBytes + 64);
  EXPECT_EQ(g.error_message().substr(0, kMaxStatusMessageBytes),
            long_message.substr(0, kMaxStatusMessageBytes));
  EXPECT_NE(g.error_message().find("(102400 bytes, cut)"), std::string::npos);
  v1::TuneBatchResponse item;
  SetStatusFields(absl::InternalError(long_message), &item);
  EXPECT_EQ(item.message(), g.error_message());
  // Short messages pass unchanged.
  EXPECT_EQ(ToGrpcStatus(absl::NotFoundError("gone")).error_message(), "gone");
}

}  // namespace
}  // namespace tunedb
