// The limits of the wire API that both ends check: the daemon refuses what
// is over them, and the CLI checks an import file against them before it
// streams a line. Documented in proto/tunedb/v1/tunedb.proto and
// docs/cli.md.
//
// Thread safety: constants only.
#ifndef TUNEDB_PROTO_WIRE_LIMITS_H_
#define TUNEDB_PROTO_WIRE_LIMITS_H_

#include <cstddef>
#include <cstdint>

namespace tunedb {

// Largest Import, in lines (the daemon's default max_import_lines).
inline constexpr int64_t kMaxImportLines = 1000000;
// Largest message the daemon receives (an ImportLine, a TuneRequest), bytes.
inline constexpr int kDaemonMaxReceiveBytes = 16 << 20;
// Largest message the CLI receives (a Record of a Query), bytes.
inline constexpr int kCliMaxReceiveBytes = 64 << 20;
// Largest JSON line an import may carry: the daemon's message limit less
// room for the message's own framing and its other fields.
inline constexpr int64_t kMaxImportLineBytes = kDaemonMaxReceiveBytes - 1024;
// Rejected lines an ImportResponse lists at most (it counts them all).
inline constexpr int kMaxImportRejectsListed = 1000;
// An import's id (ImportLine.import_id, ImportStatusRequest), bytes.
inline constexpr size_t kMaxImportIdBytes = 64;

// A filter (Query, Invalidate, Export): fields, and bytes per name and
// value. Every known field name is shorter than the name limit.
inline constexpr int kMaxFilterFields = 32;
inline constexpr size_t kMaxFilterNameBytes = 32;
inline constexpr size_t kMaxFilterValueBytes = 256;

// The largest WarmResponse the daemon sends, bytes: it stops adding entries
// before this, well under a client's default receive limit (4 MiB); the
// program asks the rest with Lookups.
inline constexpr size_t kMaxWarmResponseBytes = size_t{3} << 20;

// A Report: the planned problems it takes, the bytes of each one's text,
// and the largest aggregate it answers (ReportResponse.report_json), bytes.
// The aggregate does not grow with the records; past the cap (a database of
// many thousands of device groups or days), the daemon answers
// FAILED_PRECONDITION and a filter narrows the report.
inline constexpr int kMaxReportPlannedProblems = 100000;
inline constexpr size_t kMaxPlannedProblemBytes = 512;
inline constexpr size_t kMaxReportJsonBytes = size_t{4} << 20;

// The longest status message the daemon sends, bytes: a longer one is cut,
// so no message can outgrow gRPC's metadata limit and reach the client as
// RESOURCE_EXHAUSTED (which this API keeps for "queue full").
inline constexpr size_t kMaxStatusMessageBytes = 1024;

// The other string fields of requests have their limits where they are
// checked: DeviceKey::gpu_model (kMaxGpuModelBytes, tunedb/problem.h) and
// ReportCountersRequest's names (32 bytes, request_validation.h).

}  // namespace tunedb

#endif  // TUNEDB_PROTO_WIRE_LIMITS_H_
