#include "tuner/fleet_show.h"

#include "absl/strings/str_cat.h"
#include "store/fleet/fleet_options.h"
#include "store/fleet/fleet_store.h"
#include "tuner/format.h"
#include "tuner/table.h"

namespace tunedb::tuner {

absl::StatusOr<nlohmann::json> ShowFleetMeasurements(
    CliContext& ctx, const std::string& url, const std::string& password_file,
    const ProblemKey& key) {
  FleetOptions options;
  options.url = url;
  options.password_file = password_file;
  auto fleet = FleetStore::Open(options);
  if (!fleet.ok()) return fleet.status();
  auto measurements = (*fleet)->Measurements(key);
  if (!measurements.ok()) return measurements.status();
  nlohmann::json out = nlohmann::json::array();
  Table t({"answer", "host", "measured", "verified", "repeats>", "best algo>",
           "best ms>", "search ms>"});
  bool first = true;
  for (const Record& r : *measurements) {
    const AlgoResult* best = r.results.empty() || !r.supported()
                                 ? nullptr
                                 : &r.results.front();
    const double best_ms =
        best != nullptr ? best->cost(LaunchMode::kDirect).median_ms : 0;
    if (ctx.json()) {
      out.push_back({{"answer", first},
                     {"host", r.host},
                     {"measured_at_us", r.measured_at_us},
                     {"verified", r.verified},
                     {"repeats", r.repeats},
                     {"best_algo", best != nullptr ? best->algo : -1},
                     {"best_ms", best_ms},
                     {"search_ms", r.search_ms}});
    } else {
      t.AddRow({first ? "*" : "", r.host, FormatTime(r.measured_at_us),
                r.verified ? "yes" : "no", absl::StrCat(r.repeats),
                best != nullptr ? absl::StrCat(best->algo) : "-",
                best != nullptr ? FormatMs(best_ms) : "-",
                FormatMs(r.search_ms)});
    }
    first = false;
  }
  if (!ctx.json()) {
    ctx.out() << "\nfleet measurements (" << (*fleet)->display() << "; * "
              << "answers: current timing, verified, more repeats, later, "
                 "host name)\n";
    if (measurements->empty()) {
      ctx.out() << "none: the fleet has no measurement of this key\n";
    } else {
      t.Print(ctx.out());
    }
  }
  return out;
}

}  // namespace tunedb::tuner
