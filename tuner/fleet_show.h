// `tunedb show --fleet URL`: every host's measurement of a record's key in
// the fleet database, in the order of the conflict rule (the first answers;
// store/fleet/fleet_store.h), fetched as a value and printed by `show`.
//
// Thread safety: runs on the CLI's thread.
#ifndef TUNEDB_TUNER_FLEET_SHOW_H_
#define TUNEDB_TUNER_FLEET_SHOW_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb::tuner {

struct FleetMeasurements {
  std::string display;           // the fleet database, for people
  std::vector<Record> measured;  // the one that answers first
};

absl::StatusOr<FleetMeasurements> FetchFleetMeasurements(
    const std::string& url, const std::string& password_file,
    const ProblemKey& key);

// A JSON array, one object per host's measurement.
nlohmann::json FleetMeasurementsToJson(const FleetMeasurements& m);
// A heading and a table (or "none").
void PrintFleetMeasurements(const FleetMeasurements& m, std::ostream& out);

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_FLEET_SHOW_H_
