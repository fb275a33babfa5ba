// RevalidateReport: what one `tunedb revalidate` run did (docs/cli.md), for
// both of its forms, after a cuDNN upgrade (--from) and after a driver
// upgrade (--driver): each answer classified as kept, changed (with the
// speed change) or searched in full, and the summary rendered as a table
// or as JSON.
//
// Thread safety: a plain value, filled and rendered on one thread.
#ifndef TUNEDB_TUNER_REVALIDATE_REPORT_H_
#define TUNEDB_TUNER_REVALIDATE_REPORT_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tunedb/problem.h"
#include "tunedb/record.h"
#include "tuner/choice_diff.h"
#include "tuner/prewarm_runner.h"

namespace tunedb::tuner {

struct RevalidateReport {
  // The cuDNN form: the old version (cuDNN's encoding); 0 in the driver
  // form.
  int from_cudnn = 0;
  // The driver form: the serving GPU's driver, and the older driver asked
  // for ("" for every older one).
  std::string to_driver;
  std::string from_driver;
  DeviceKey to;
  int64_t old_records = 0;  // records of the source matched
  PrewarmSummary run;
  int64_t kept = 0;
  int64_t changed = 0;
  int64_t full_searches = 0;
  // Changed keys: the old choice re-timed over the new choice (where the
  // new record timed both).
  std::vector<double> speedups;
  // The old records' search time of the keys searched in this run.
  double old_search_ms = 0;
  double wall_s = 0;
  ChoiceDiff diff;  // the revalidated keys, by group

  bool driver_form() const { return !to_driver.empty(); }
  // Counts one answer: `fresh`, the record made from `source`, re-timed
  // (kept for Tally) or searched in full.
  void Classify(const Record& source, const Record& fresh);
  // Counts the re-timed keys Classify kept as kept or changed.
  void Tally();

 private:
  std::vector<Record> sources_, revalidated_;
};

nlohmann::json ReportToJson(const RevalidateReport& r);
void PrintReport(const RevalidateReport& r, std::ostream& out);

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_REVALIDATE_REPORT_H_
