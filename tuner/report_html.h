// RenderReportHtml: `tunedb report`'s page, one self-contained HTML file
// (inline CSS, SVG and a few lines of script; nothing fetched from the
// network) from a ReportData: the summary, records and coverage per device
// and cuDNN version, the search time saved with a plot by day (the day
// answers were served where the store counted them so, else the day the
// records were stored), the time saved by week and program, the stored
// choice against cuDNN's heuristic, predictions, the latest revalidations
// and the largest workspaces. Its size depends on the number of device
// groups, days and revalidations, not on the number of records.
//
// A fleet's report (ReportData::fleet) is titled so, names the fleet and
// its hosts, and adds a hosts section (and has no weeks section). Each
// section carries an id (summary, hosts, devices, saved, weeks, heuristic,
// predictions, revalidation, workspaces) and each plot a data-figure
// attribute, for tests that read the page; the
// script sets each plot's data-drawn to the number of its elements drawn
// with a size, and marks <body data-script="ok"> once it ran.
//
// Thread safety: pure function.
#ifndef TUNEDB_TUNER_REPORT_HTML_H_
#define TUNEDB_TUNER_REPORT_HTML_H_

#include <cstdint>
#include <optional>
#include <string>

#include "common/report_data.h"

namespace tunedb::tuner {

// The daemon's counters since it started (StatsResponse), where known.
struct DaemonCounters {
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t predictions = 0;  // misses answered by a prediction
  double uptime_s = 0;
};

struct ReportPage {
  std::string source;      // what the report is about, e.g. the address
  int64_t generated_us = 0;  // when, µs since the epoch
  std::optional<DaemonCounters> counters;
};

std::string RenderReportHtml(const ReportData& data, const ReportPage& page);

// `text` with &, <, >, " and ' escaped for HTML.
std::string HtmlEscape(const std::string& text);

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_REPORT_HTML_H_
