// `tunedb show --fleet URL`: every host's measurement of a record's key in
// the fleet database, in the order of the conflict rule (the first answers;
// store/fleet/fleet_store.h).
//
// Thread safety: runs on the CLI's thread.
#ifndef TUNEDB_TUNER_FLEET_SHOW_H_
#define TUNEDB_TUNER_FLEET_SHOW_H_

#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tunedb/problem.h"
#include "tuner/cli_context.h"

namespace tunedb::tuner {

// The measurements of `key` as a JSON array, or a table printed to
// ctx.out() (and then an empty array).
absl::StatusOr<nlohmann::json> ShowFleetMeasurements(
    CliContext& ctx, const std::string& url, const std::string& password_file,
    const ProblemKey& key);

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_FLEET_SHOW_H_
