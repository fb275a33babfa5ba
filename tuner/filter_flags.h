// Record filters from the command line, shared by query, export and
// invalidate: --filter field=value (any canonical key field, repeatable),
// the shortcuts --gpu, --op, --dtype, --layout, and --since/--until times.
//
// Thread safety: pure functions (FilterFlags is a plain value).
#ifndef TUNEDB_TUNER_FILTER_FLAGS_H_
#define TUNEDB_TUNER_FILTER_FLAGS_H_

#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tunedb/v1/tunedb.pb.h"

namespace tunedb::tuner {

struct FilterFlags {
  std::vector<std::string> filters;  // "field=value"
  std::string gpu, op, dtype, layout;
  std::string since, until;
};

// Adds the flags to `cmd`.
void AddFilterFlags(CLI::App* cmd, FilterFlags* flags);

// Builds the wire filter; INVALID_ARGUMENT naming the bad flag or field.
// `extra` are more "field=value" terms (invalidate's positional FILTER).
absl::StatusOr<v1::Filter> BuildFilter(const FilterFlags& flags,
                                       const std::vector<std::string>& extra,
                                       absl::Time now);

// A time bound: RFC 3339 ("2026-11-29T12:00:00Z"), a date ("2026-11-29",
// UTC midnight), or an age ("90m", "24h", "7d", "2w") meaning that long
// before `now`.
absl::StatusOr<absl::Time> ParseTimeBound(const std::string& text,
                                          absl::Time now);

// "gpu=NVIDIA H200 op=fwd since=..." for messages.
std::string DescribeFilter(const v1::Filter& filter);

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_FILTER_FLAGS_H_
