#include "tuner/report_html.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "tuner/format.h"
#include "tuner/progress_bar.h"

namespace tunedb::tuner {
namespace {

constexpr const char* kStyle = R"(<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;
 color:#1d2330;background:#f5f6f8}
main{max-width:1100px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:0 0 10px}
.sub{color:#5b6472;margin:0 0 18px}
section{background:#fff;border:1px solid #dde1e7;border-radius:8px;
 padding:16px 18px;margin:0 0 16px}
.cards{display:flex;flex-wrap:wrap;gap:12px}
.card{flex:1 1 160px;border:1px solid #e4e7ec;border-radius:6px;padding:10px}
.card b{display:block;font-size:20px}.card span{color:#5b6472;font-size:12px}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{padding:5px 8px;border-bottom:1px solid #eceef2;text-align:left}
th{cursor:pointer;background:#f0f2f5;user-select:none}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.note{color:#5b6472;font-size:12px;margin:8px 0 0}
.figs{display:flex;flex-wrap:wrap;gap:18px}.figs>div{flex:1 1 420px}
svg text{font:11px system-ui,sans-serif;fill:#3a4250}
.bad{color:#b42318}.good{color:#067647}
</style>)";

// Sorts a table by the clicked column; counts what each figure draws (its
// direct children with a size: data-drawn) and marks the page as scripted.
constexpr const char* kScript = R"(<script>
(function(){
 document.querySelectorAll('table').forEach(function(t){
  t.querySelectorAll('th').forEach(function(th,i){
   th.addEventListener('click',function(){
    var rows=Array.prototype.slice.call(t.tBodies[0].rows);
    var up=th.dataset.dir!=='up';th.dataset.dir=up?'up':'down';
    rows.sort(function(a,b){
     var x=a.cells[i].dataset.v||a.cells[i].textContent;
     var y=b.cells[i].dataset.v||b.cells[i].textContent;
     var nx=parseFloat(x),ny=parseFloat(y);
     var c=(!isNaN(nx)&&!isNaN(ny))?nx-ny:x.localeCompare(y);
     return up?c:-c;});
    rows.forEach(function(r){t.tBodies[0].appendChild(r);});});});});
 document.querySelectorAll('svg[data-figure]').forEach(function(svg){
  var n=0;
  Array.prototype.forEach.call(svg.children,function(c){
   var b=c.getBBox?c.getBBox():null;if(b&&(b.width>0||b.height>0))n++;});
  svg.setAttribute('data-drawn',n);});
 document.body.dataset.script='ok';
})();
</script>)";

// A duration: "0.250 ms" under a second, else "12.3s", "4m05s", "3h20m".
std::string Hours(double ms) {
  return ms < 1000 ? absl::StrCat(FormatMs(ms), " ms")
                   : FormatSeconds(ms / 1000);
}

std::string Percent(int64_t part, int64_t whole) {
  if (whole <= 0) return "-";
  return absl::StrFormat("%.1f%%", 100.0 * static_cast<double>(part) /
                                       static_cast<double>(whole));
}

// A cell with a number, sortable by its raw value.
std::string NumCell(double value, const std::string& text) {
  return absl::StrFormat("<td class=n data-v=\"%.6g\">%s</td>", value,
                         HtmlEscape(text));
}

std::string Cell(const std::string& text) {
  return absl::StrCat("<td>", HtmlEscape(text), "</td>");
}

std::string Header(const std::vector<std::string>& names) {
  std::string out = "<thead><tr>";
  for (const std::string& n : names) {
    const bool numeric = !n.empty() && n.back() == '>';
    absl::StrAppend(&out, numeric ? "<th class=n>" : "<th>",
                    HtmlEscape(numeric ? n.substr(0, n.size() - 1) : n),
                    "</th>");
  }
  return out + "</tr></thead>";
}

std::string Card(const std::string& value, const std::string& label) {
  return absl::StrCat("<div class=card><b>", HtmlEscape(value), "</b><span>",
                      HtmlEscape(label), "</span></div>");
}

// A fleet's report: its hosts and their records, and why its served counts
// are zero; nothing for one store's.
std::string FleetHosts(const ReportData& d) {
  if (d.fleet.empty()) return "";
  std::string out = absl::StrCat(
      "<section id=hosts><h2>Hosts</h2><table>",
      Header({"host", "records>"}), "<tbody>");
  for (const HostRecords& h : d.hosts) {
    absl::StrAppend(&out, "<tr>", Cell(h.host),
                    NumCell(h.records, absl::StrCat(h.records)), "</tr>");
  }
  return absl::StrCat(
      out, "</tbody></table><p class=note>Every host's records in the fleet "
      "database ", HtmlEscape(d.fleet), ", one per key and host. Answers "
      "served (and so the time saved) are counted by each daemon in its own "
      "store, not in the fleet database: <code>tunedb report</code> against "
      "a daemon gives its own.</p></section>");
}

std::string Summary(const ReportData& d, const ReportPage& page) {
  std::string out = "<section id=summary><h2>Summary</h2><div class=cards>";
  if (!d.fleet.empty()) {
    absl::StrAppend(&out, Card(absl::StrCat(d.hosts.size()), "hosts"));
  }
  absl::StrAppend(&out, Card(absl::StrCat(d.records), "records"),
                  Card(absl::StrCat(d.groups.size()),
                       "GPU model and cuDNN version pairs"),
                  Card(absl::StrCat(d.served), "answers served"),
                  Card(Hours(d.saved_ms), "start-up search time saved"));
  if (page.counters) {
    absl::StrAppend(&out, Card(absl::StrCat(page.counters->predictions),
                               "misses answered by prediction"));
  }
  return out + "</div></section>";
}

std::string DeviceRow(const DeviceGroup& g, int64_t planned) {
  std::string row = "<tr>";
  absl::StrAppend(&row, Cell(g.gpu_model),
                  Cell(CudnnVersionText(g.cudnn_version)),
                  NumCell(g.records, absl::StrCat(g.records)),
                  NumCell(g.unsupported, absl::StrCat(g.unsupported)),
                  NumCell(g.served, absl::StrCat(g.served)),
                  NumCell(g.saved_ms, Hours(g.saved_ms)),
                  NumCell(g.search_ms, Hours(g.search_ms)),
                  NumCell(g.revalidated, absl::StrCat(g.revalidated)));
  if (planned > 0) {
    absl::StrAppend(
        &row, NumCell(static_cast<double>(g.planned_stored) / planned,
                      absl::StrCat(g.planned_stored, "/", planned, " (",
                                   Percent(g.planned_stored, planned), ")")));
  }
  return row + "</tr>";
}

std::string Devices(const ReportData& d) {
  std::vector<std::string> names = {
      "GPU",          "cuDNN",          "records>",   "unsupported>",
      "served>",      "time saved>",    "search time>", "revalidated>"};
  const bool planned = !d.models.empty() && d.planned > 0;
  if (planned) names.push_back("coverage>");
  std::string out = absl::StrCat(
      "<section id=devices><h2>Records and coverage per device and cuDNN "
      "version</h2><table>",
      Header(names), "<tbody>");
  for (const DeviceGroup& g : d.groups) {
    absl::StrAppend(&out, DeviceRow(g, planned ? d.planned : 0));
  }
  absl::StrAppend(&out, "</tbody></table>");
  if (planned) {
    std::string models;
    for (const std::string& m : d.models) {
      absl::StrAppend(&models, models.empty() ? "" : ", ", m);
    }
    absl::StrAppend(&out, "<p class=note>Coverage: the ", d.planned,
                    " problems of ", HtmlEscape(models),
                    " stored for each device (<code>tunedb coverage</code> "
                    "lists the others).</p>");
  }
  return out + "</section>";
}

// Vertical bars with their counts above them.
std::string BarChart(const std::string& figure, const std::string& title,
                     const std::vector<std::string>& labels,
                     const std::vector<int64_t>& values) {
  const int w = 460, h = 220, left = 10, bottom = 36, top = 28;
  const int64_t most = std::max<int64_t>(
      1, *std::max_element(values.begin(), values.end()));
  const double slot = static_cast<double>(w - 2 * left) / values.size();
  std::string out = absl::StrFormat(
      "<div><svg data-figure=\"%s\" viewBox=\"0 0 %d %d\" width=\"100%%\" "
      "role=img aria-label=\"%s\"><text x=%d y=16 "
      "style=\"font-weight:600\">%s</text>",
      figure, w, h, HtmlEscape(title), left, HtmlEscape(title));
  if (*std::max_element(values.begin(), values.end()) == 0) {
    return absl::StrFormat(
        "%s<text x=%d y=%d>No record to count here.</text></svg></div>", out,
        left, h / 2);
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const double bar_h =
        (h - top - bottom) * static_cast<double>(values[i]) / most;
    const double x = left + slot * i + slot * 0.15;
    const double y = h - bottom - bar_h;
    absl::StrAppendFormat(
        &out,
        "<rect x=%.1f y=%.1f width=%.1f height=%.1f fill=\"#3b6fd8\"/>"
        "<text x=%.1f y=%.1f text-anchor=middle>%d</text>"
        "<text x=%.1f y=%d text-anchor=middle>%s</text>",
        x, y, slot * 0.7, bar_h, x + slot * 0.35, y - 4, values[i],
        x + slot * 0.35, h - bottom + 16, HtmlEscape(labels[i]));
  }
  return out + "</svg></div>";
}

std::string Heuristic(const ReportData& d) {
  int64_t chosen = 0;
  for (int64_t n : d.ranks) chosen += n;
  std::vector<std::string> rank_labels(RankBucketNames().begin(),
                                       RankBucketNames().end());
  std::vector<std::string> gain_labels(GainBucketNames().begin(),
                                       GainBucketNames().end());
  return absl::StrCat(
      "<section id=heuristic><h2>The stored choice against cuDNN's "
      "heuristic</h2><div class=figs>",
      BarChart("heuristic-rank",
               "Heuristic rank of the stored choice (records)", rank_labels,
               {d.ranks.begin(), d.ranks.end()}),
      BarChart("heuristic-gain",
               "Speed-up over the heuristic's first choice (records)",
               gain_labels, {d.gains.begin(), d.gains.end()}),
      "</div><p class=note>",
      d.ranks[5] == chosen
          ? std::string("cuDNN's heuristic ranked none of the stored choices. ")
          : absl::StrCat(Percent(d.ranks[0], chosen),
                         " of the records keep the heuristic's first choice "
                         "(a choice must beat it by 2% to be stored "
                         "instead). "),
      d.gains_unknown,
      " records have no measured heuristic first choice (unsupported "
      "problems, or a heuristic that was not asked).</p></section>");
}


// A UTC day (days since the epoch) as 2026-12-06.
std::string DayText(int64_t day) {
  return absl::FormatTime("%Y-%m-%d", absl::FromUnixSeconds(day * 86400),
                          absl::UTCTimeZone());
}

// One day's saving, a point of the saved plot.
struct DayMs {
  int64_t day = 0;
  double saved_ms = 0;
};

// The days' saving summed over the days: a line of the running total over
// bars of each day's, in one figure.
std::string SavedSvg(const std::vector<DayMs>& days) {
  std::string out =
      "<svg data-figure=\"saved\" viewBox=\"0 0 1000 260\" width=\"100%\" "
      "role=img aria-label=\"Search time saved over time\">";
  const int left = 70, right = 20, top = 20, bottom = 40, w = 1000, h = 260;
  double sum = 0;
  for (const DayMs& d : days) sum += d.saved_ms;
  const double total = std::max(sum, 1e-9);
  const size_t n = days.size();
  const double step = n > 1 ? static_cast<double>(w - left - right) / (n - 1)
                            : 0;
  std::string line;
  double running = 0;
  for (size_t i = 0; i < n; ++i) {
    running += days[i].saved_ms;
    const double x = left + step * i + (n > 1 ? 0 : (w - left - right) / 2.0);
    const double y = h - bottom - (h - top - bottom) * running / total;
    const double bar = (h - top - bottom) * days[i].saved_ms / total;
    const double bar_w = std::clamp(n > 1 ? step * 0.6 : 40.0, 2.0, 40.0);
    absl::StrAppendFormat(&out,
                          "<rect x=%.1f y=%.1f width=%.1f height=%.1f "
                          "fill=\"#b9cbf2\"/>",
                          x - bar_w / 2, h - bottom - bar, bar_w, bar);
    absl::StrAppendFormat(&line, "%s%.1f,%.1f ", i == 0 ? "" : "L", x, y);
  }
  if (!line.empty()) {
    absl::StrAppend(&out, "<path d=\"M", line,
                    "\" fill=none stroke=\"#3b6fd8\" stroke-width=\"2\"/>");
  }
  absl::StrAppendFormat(
      &out,
      "<line x1=%d y1=%d x2=%d y2=%d stroke=\"#8a93a3\"/>"
      "<text x=%d y=%d text-anchor=end>%s</text>"
      "<text x=%d y=%d text-anchor=end>0</text>",
      left, h - bottom, w - right, h - bottom, left - 6, top + 4,
      HtmlEscape(Hours(sum)), left - 6, h - bottom);
  if (n > 0) {
    absl::StrAppendFormat(
        &out,
        "<text x=%d y=%d>%s</text><text x=%d y=%d text-anchor=end>%s</text>",
        left, h - bottom + 18, DayText(days.front().day), w - right,
        h - bottom + 18, DayText(days.back().day));
  }
  return out + "</svg>";
}

// The saving by the day answers were served where the store counts them
// so; else by the day the records were stored (a database that has counted
// none by day yet, a fleet's).
std::string SavedPlot(const ReportData& d) {
  std::vector<DayMs> days;
  std::string note;
  if (!d.served_days.empty()) {
    for (const ServedDay& s : d.served_days) days.push_back({s.day, s.saved_ms});
    note =
        "The bars: the search time saved by the answers served each day "
        "(UTC), each answer its record's search time when it was served; "
        "the line adds them up. The database keeps the days of the last "
        "400.";
  } else {
    for (const DaySaving& s : d.days) days.push_back({s.day, s.saved_ms});
    note =
        "The line adds up the saving of the records by the day they were "
        "stored, the bars each day's own; this database has counted no "
        "answers by day yet (a database made before the served days, or a "
        "fleet's), so a record's answers count on the day it was stored.";
  }
  return absl::StrCat(
      "<section id=saved><h2>Start-up time saved</h2>", SavedSvg(days),
      "<p class=note>Saved: each record's search time times the answers it "
      "served (a process that finds the answer stored does not search). ",
      note, "</p></section>");
}

// The programs with the most time saved each week (a store's report only).
std::string WeekPrograms(const ReportData& d) {
  if (!d.fleet.empty()) return "";
  std::string out = absl::StrCat(
      "<section id=weeks><h2>Time saved by week and program</h2><table>",
      Header({"week (from Monday)", "program", "served>", "saved>"}),
      "<tbody>");
  for (const WeekProgram& p : d.week_programs) {
    absl::StrAppend(
        &out, "<tr>", Cell(DayText(p.week)),  // sorts as text
        Cell(p.program.empty() ? "(none named)" : p.program),
        NumCell(p.served, absl::StrCat(p.served)),
        NumCell(p.saved_ms, Hours(p.saved_ms)), "</tr>");
  }
  return absl::StrCat(
      out, "</tbody></table><p class=note>",
      d.week_programs.empty()
          ? "No answers counted by day and program yet. "
          : "",
      "Per week (Monday to Sunday, UTC), the last ", kWeeksListed,
      " up to the newest day with answers, the ", kWeekProgramsListed,
      " programs whose answers saved the most search time. A program is "
      "what its Lookups name (<code>TUNEDB_PROGRAM</code>, or "
      "<code>cmd-</code> and a digest of its command line); \"(none "
      "named)\" is the Lookups that name none.</p></section>");
}

std::string Predictions(const ReportData& d, const ReportPage& page) {
  std::string out = "<section id=predictions><h2>Predictions</h2>";
  if (!d.fleet.empty()) {
    absl::StrAppend(&out, "<p class=note>The daemon asked for the report "
                          "only: the fleet keeps no counters.</p>");
  }
  if (!page.counters) {
    return out + "<p>The daemon's counters could not be read.</p></section>";
  }
  const DaemonCounters& c = *page.counters;
  return absl::StrCat(
      out, "<div class=cards>", Card(absl::StrCat(c.hits), "hits"),
      Card(absl::StrCat(c.misses), "misses"),
      Card(absl::StrCat(c.predictions),
           "misses answered by prediction, each searched since or waiting "
           "for a search"),
      Card(FormatSeconds(c.uptime_s), "daemon up"),
      "</div><p class=note>Since the daemon started. A predicted answer is "
      "not stored: <code>tunedb coverage</code> lists the problems of a "
      "model or shape file still answered by prediction.</p></section>");
}

std::string Revalidation(const ReportData& d) {
  std::string out =
      "<section id=revalidation><h2>What the latest revalidations "
      "changed</h2>";
  if (d.revalidations.empty()) {
    return out + "<p>No record was made by a revalidation.</p></section>";
  }
  absl::StrAppend(&out, "<table>",
                  Header({"GPU", "from", "to", "latest", "records>",
                          "compared>", "choice changed>", "slower>"}),
                  "<tbody>");
  for (size_t i = 0; i < d.revalidations.size() && i < 10; ++i) {
    const RevalidationChange& c = d.revalidations[i];
    absl::StrAppend(
        &out, "<tr>", Cell(c.gpu_model), Cell(c.from), Cell(c.to),
        Cell(FormatTime(c.latest_us)), NumCell(c.records, absl::StrCat(c.records)),
        NumCell(c.compared, absl::StrCat(c.compared)),
        NumCell(c.changed, absl::StrCat(c.changed, " (",
                                        Percent(c.changed, c.compared), ")")),
        absl::StrFormat("<td class=\"n%s\" data-v=%d>%d</td>",
                        c.slower > 0 ? " bad" : "", c.slower, c.slower),
        "</tr>");
  }
  return absl::StrCat(
      out,
      "</tbody></table><p class=note>Compared: revalidated records whose "
      "older version's record is still stored; slower: the new choice costs "
      "over 1.05 times the older one's. A driver revalidation replaces the "
      "key's record, so it has nothing to compare.</p></section>");
}

std::string Workspaces(const ReportData& d) {
  std::string out = absl::StrCat(
      "<section id=workspaces><h2>The largest workspaces</h2><table>",
      Header({"GPU", "cuDNN", "problem", "choice", "workspace>", "ms>",
              "ms without workspace>", "served>"}),
      "<tbody>");
  for (const WorkspaceUse& w : d.workspaces) {
    absl::StrAppend(
        &out, "<tr>", Cell(w.gpu_model),
        Cell(CudnnVersionText(w.cudnn_version)), Cell(w.problem),
        Cell(w.config), NumCell(w.workspace_bytes, FormatBytes(w.workspace_bytes)),
        NumCell(w.ms, FormatMs(w.ms)),
        w.no_workspace_ms < 0
            ? Cell("none runs")
            : NumCell(w.no_workspace_ms,
                      absl::StrFormat("%s (%.2fx)", FormatMs(w.no_workspace_ms),
                                      w.no_workspace_ms / std::max(w.ms, 1e-9))),
        NumCell(w.served, absl::StrCat(w.served)), "</tr>");
  }
  return absl::StrCat(
      out,
      "</tbody></table><p class=note>The stored choices with the most "
      "workspace, and the cost of the fastest choice that needs none: a "
      "small factor is workspace a caller could save.</p></section>");
}

}  // namespace

std::string HtmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string RenderReportHtml(const ReportData& data, const ReportPage& page) {
  const bool fleet = !data.fleet.empty();
  const std::string source =
      fleet ? absl::StrCat("fleet ", data.fleet, ": ", data.hosts.size(),
                           " hosts, ", data.records, " records, through ",
                           page.source)
            : page.source;
  std::string out = absl::StrCat(
      "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
      "<meta name=viewport content=\"width=device-width,initial-scale=1\">"
      "<title>tunedb ", fleet ? "fleet report" : "report", ": ",
      HtmlEscape(source), "</title>", kStyle, "</head><body><main>",
      "<h1>tunedb ", fleet ? "fleet report" : "report", "</h1><p class=sub>",
      HtmlEscape(source), " &middot; generated ",
      HtmlEscape(FormatTime(page.generated_us)), "</p>");
  absl::StrAppend(&out, Summary(data, page), FleetHosts(data), Devices(data),
                  SavedPlot(data), WeekPrograms(data), Heuristic(data),
                  Predictions(data, page),
                  Revalidation(data), Workspaces(data));
  return absl::StrCat(out, "</main>", kScript, "</body></html>\n");
}

}  // namespace tunedb::tuner
