#include "tuner/fleet_show.h"

#include "absl/strings/str_cat.h"
#include "store/fleet/fleet_options.h"
#include "store/fleet/fleet_store.h"
#include "tuner/format.h"
#include "tuner/table.h"

namespace tunedb::tuner {
namespace {

// The fastest result of a measurement, or none if it has no supported one.
const AlgoResult* Best(const Record& r) {
  return r.results.empty() || !r.supported() ? nullptr : &r.results.front();
}

double BestMs(const AlgoResult* best) {
  return best != nullptr ? best->cost(LaunchMode::kDirect).median_ms : 0;
}

}  // namespace

absl::StatusOr<FleetMeasurements> FetchFleetMeasurements(
    const std::string& url, const std::string& password_file,
    const ProblemKey& key) {
  FleetOptions options;
  options.url = url;
  options.password_file = password_file;
  auto fleet = FleetStore::Open(options);
  if (!fleet.ok()) return fleet.status();
  auto measurements = (*fleet)->Measurements(key);
  if (!measurements.ok()) return measurements.status();
  return FleetMeasurements{(*fleet)->display(), *std::move(measurements)};
}

nlohmann::json FleetMeasurementsToJson(const FleetMeasurements& m) {
  nlohmann::json out = nlohmann::json::array();
  bool first = true;
  for (const Record& r : m.measured) {
    const AlgoResult* best = Best(r);
    out.push_back({{"answer", first},
                   {"host", r.host},
                   {"measured_at_us", r.measured_at_us},
                   {"verified", r.verified},
                   {"repeats", r.repeats},
                   {"best_algo", best != nullptr ? best->algo : -1},
                   {"best_ms", BestMs(best)},
                   {"search_ms", r.search_ms}});
    first = false;
  }
  return out;
}

void PrintFleetMeasurements(const FleetMeasurements& m, std::ostream& out) {
  out << "\nfleet measurements (" << m.display << "; * "
      << "answers: current timing, verified, more repeats, later, "
         "host name)\n";
  if (m.measured.empty()) {
    out << "none: the fleet has no measurement of this key\n";
    return;
  }
  Table t({"answer", "host", "measured", "verified", "repeats>", "best algo>",
           "best ms>", "search ms>"});
  bool first = true;
  for (const Record& r : m.measured) {
    const AlgoResult* best = Best(r);
    t.AddRow({first ? "*" : "", r.host, FormatTime(r.measured_at_us),
              r.verified ? "yes" : "no", absl::StrCat(r.repeats),
              best != nullptr ? absl::StrCat(best->algo) : "-",
              best != nullptr ? FormatMs(BestMs(best)) : "-",
              FormatMs(r.search_ms)});
    first = false;
  }
  t.Print(out);
}

}  // namespace tunedb::tuner
