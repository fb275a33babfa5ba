// Conversions between the tunedb.v1 wire messages and the domain types of
// tunedb/problem.h and tunedb/record.h. The only place that knows both.
//
// FromProto functions validate: a problem or device that is inconsistent, or
// an enum value out of range, is INVALID_ARGUMENT naming the field.
//
// Thread safety: stateless functions.
#ifndef TUNEDB_PROTO_CONVERT_H_
#define TUNEDB_PROTO_CONVERT_H_

#include "absl/status/statusor.h"
#include "common/prediction.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"
#include "tunedb/v1/tunedb.pb.h"

namespace tunedb {

void ToProto(const DeviceKey& in, v1::DeviceKey* out);
void ToProto(const ConvProblem& in, v1::ConvProblem* out);
void ToProto(const AlgoResult& in, v1::AlgoResult* out);
void ToProto(const Record& in, v1::Record* out);
void ToProto(const Constraints& in, v1::Constraints* out);
void ToProto(const Prediction& in, v1::Prediction* out);

absl::StatusOr<DeviceKey> FromProto(const v1::DeviceKey& in);
absl::StatusOr<ConvProblem> FromProto(const v1::ConvProblem& in);
absl::StatusOr<AlgoResult> FromProto(const v1::AlgoResult& in);
absl::StatusOr<Record> FromProto(const v1::Record& in);
absl::StatusOr<Constraints> FromProto(const v1::Constraints& in);
// INVALID_ARGUMENT for no candidate, a bad one, or a confidence outside
// [0, 1] or a negative distance.
absl::StatusOr<Prediction> FromProto(const v1::Prediction& in);

}  // namespace tunedb

#endif  // TUNEDB_PROTO_CONVERT_H_
