// Formatting of records and values for the CLI's tables and JSON output.
//
// The JSON shapes written here are the CLI's --json output (documented in
// docs/cli.md); the export file format is the daemon's, not this.
//
// Thread safety: pure functions.
#ifndef TUNEDB_TUNER_FORMAT_H_
#define TUNEDB_TUNER_FORMAT_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "common/record_labels.h"
#include "nlohmann/json.hpp"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb::tuner {

// "64 MiB", "0 B", "1.5 GiB".
std::string FormatBytes(int64_t bytes);
// "0.123 ms" with 3 significant decimals.
std::string FormatMs(double ms);
// "2026-11-29 16:04:05Z" (UTC) for µs since the epoch.
std::string FormatTime(int64_t micros);
// ShapeSummary, TypeSummary and AlgoLabel: common/record_labels.h.
using ::tunedb::AlgoLabel;
using ::tunedb::ShapeSummary;
using ::tunedb::TypeSummary;

// Named constraint sets `show` evaluates: unlimited, <= 0 B, <= 64 MiB,
// <= 1 GiB, deterministic only.
struct NamedConstraints {
  std::string name;
  Constraints constraints;
};
const std::vector<NamedConstraints>& CommonConstraintSets();

nlohmann::json AlgoToJson(const AlgoResult& r);
nlohmann::json DeviceToJson(const DeviceKey& d);
nlohmann::json ProblemToJson(const ConvProblem& p);
// The whole record, with key text and hash, and the best algorithm.
nlohmann::json RecordToJson(const Record& r);
// RecordToJson plus "choices": the choice under each CommonConstraintSets().
nlohmann::json RecordWithChoicesToJson(const Record& r);

// For people: the key, provenance, the whole ranking as a table, and the
// algorithm chosen under each of CommonConstraintSets().
void PrintRecordDetails(std::ostream& out, const Record& r);

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_FORMAT_H_
