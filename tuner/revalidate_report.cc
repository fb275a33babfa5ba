#include "tuner/revalidate_report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/median.h"
#include "tuner/progress_bar.h"
#include "tuner/table.h"

namespace tunedb::tuner {
namespace {

std::string SpeedupText(const std::vector<double>& speedups) {
  if (speedups.empty()) return "";
  return absl::StrFormat(" (old choice %.3fx the new one's time, median; "
                         "at most %.3fx)",
                         Median(speedups),
                         *std::max_element(speedups.begin(), speedups.end()));
}

int64_t ChangedIn(const std::vector<KeyChange>& changes) {
  return std::count_if(changes.begin(), changes.end(),
                       [](const KeyChange& c) { return c.changed; });
}

// The first line of the table: where from, and for what.
std::string Heading(const RevalidateReport& r) {
  if (!r.driver_form()) {
    return absl::StrCat("revalidated from cuDNN ",
                        CudnnVersionText(r.from_cudnn), " for ",
                        r.to.gpu_model, ", cuDNN ",
                        CudnnVersionText(r.to.cudnn_version));
  }
  return absl::StrCat(
      "revalidated from ",
      r.from_driver.empty() ? "drivers older than " + r.to_driver
                            : "driver " + r.from_driver,
      " for ", r.to.gpu_model, ", cuDNN ",
      CudnnVersionText(r.to.cudnn_version), ", driver ", r.to_driver);
}

}  // namespace

void RevalidateReport::Classify(const Record& source, const Record& fresh) {
  old_search_ms += source.search_ms;
  const bool retimed = driver_form()
                           ? !fresh.revalidated_from_driver.empty()
                           : fresh.revalidated_from_cudnn == from_cudnn;
  if (!retimed) {
    ++full_searches;
    return;
  }
  sources_.push_back(source);
  revalidated_.push_back(fresh);
}

void RevalidateReport::Tally() {
  diff.Add(sources_, revalidated_);
  for (const auto& [name, changes] : diff.groups) {
    for (const KeyChange& c : changes) {
      if (!c.changed) {
        ++kept;
        continue;
      }
      ++changed;
      if (c.speedup) speedups.push_back(*c.speedup);
    }
  }
}

nlohmann::json ReportToJson(const RevalidateReport& r) {
  nlohmann::json j;
  if (r.driver_form()) {
    j["from_driver"] = r.from_driver;  // "": every older driver
    j["to_driver"] = r.to_driver;
  } else {
    j["from_cudnn"] = CudnnVersionText(r.from_cudnn);
  }
  j["to"] = r.to.ToText();
  j["old_records"] = r.old_records;
  // The driver form sends every record it lists; one answered as stored
  // (re-timed meanwhile) counts here.
  j["already_stored"] =
      r.run.already_stored + (r.driver_form() ? r.run.hits : 0);
  j["kept"] = r.kept;
  j["changed"] = r.changed;
  j["median_speedup_of_changed"] = Median(r.speedups);
  j["full_searches"] = r.full_searches;
  j["failed"] = r.run.failed;
  j["not_sent"] = r.run.not_sent + r.run.unanswered;
  j["search_s"] = r.run.search_ms_spent / 1000;
  j["old_search_s"] = r.old_search_ms / 1000;
  j["wall_s"] = r.wall_s;
  j["interrupted"] = r.run.interrupted;
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& [name, changes] : r.diff.groups) {
    groups.push_back({{"group", name},
                      {"revalidated", changes.size()},
                      {"changed", ChangedIn(changes)}});
  }
  j["groups"] = groups;
  nlohmann::json failures = nlohmann::json::array();
  for (const PrewarmFailure& f : r.run.failures) {
    failures.push_back({{"key", f.key}, {"error", f.error}});
  }
  j["failures"] = failures;
  return j;
}

void PrintReport(const RevalidateReport& r, std::ostream& out) {
  const double ratio =
      r.old_search_ms > 0 ? r.run.search_ms_spent / r.old_search_ms : 0;
  out << Heading(r) << "\n";
  Table t({"", "keys>"});
  t.AddRow({"old records matched", absl::StrCat(r.old_records)});
  t.AddRow({"already stored (skipped)",
            absl::StrCat(r.run.already_stored +
                         (r.driver_form() ? r.run.hits : 0))});
  t.AddRow({"choice kept", absl::StrCat(r.kept)});
  t.AddRow({"choice changed", absl::StrCat(r.changed)});
  t.AddRow({"full search needed", absl::StrCat(r.full_searches)});
  t.AddRow({"failed", absl::StrCat(r.run.failed)});
  if (r.run.not_sent + r.run.unanswered > 0) {
    t.AddRow({"not done (rerun to resume)",
              absl::StrCat(r.run.not_sent + r.run.unanswered)});
  }
  t.Print(out);
  out << "\nchanged choices" << (r.speedups.empty() ? ": none timed both ways"
                                                    : SpeedupText(r.speedups))
      << "\nsearch time " << FormatSeconds(r.run.search_ms_spent / 1000);
  if (ratio > 0) {
    out << absl::StrFormat(" (%.2fx the old %s's searches of these keys, %s)",
                           ratio, r.driver_form() ? "driver" : "version",
                           FormatSeconds(r.old_search_ms / 1000));
  }
  out << ", wall time " << FormatSeconds(r.wall_s) << "\n";
  if (r.diff.groups.empty()) return;
  out << "\n";
  Table g({"group", "revalidated>", "changed>"});
  for (const auto& [name, changes] : r.diff.groups) {
    g.AddRow({name, absl::StrCat(changes.size()),
              absl::StrCat(ChangedIn(changes))});
  }
  g.Print(out);
}

}  // namespace tunedb::tuner
