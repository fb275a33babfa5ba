// ReportAggregator and RenderReportHtml on made-up records: the groups and
// their sums, the heuristic buckets, the largest workspaces, what a
// revalidation changed, coverage of planned problems, and the page (with
// and without the answers served by day and program).
#include "common/report_data.h"

#include <algorithm>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tuner/report_records.h"
#include "tuner/report_html.h"

namespace tunedb::tuner {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kDayUs = int64_t{86400} * 1000000;

TEST(ReportAggregatorTest, GroupsByGpuAndCudnnWithServedAndSavedSums) {
  ReportAggregator aggregator;
  double saved = 0;
  int64_t served = 0;
  for (int64_t i = 0; i < 20; ++i) {
    const Record r = SyntheticRecord(i);
    saved += r.served_count * r.search_ms;
    served += r.served_count;
    aggregator.Add(r);
  }
  const ReportData d = aggregator.Finish();
  EXPECT_EQ(d.records, 20);
  EXPECT_EQ(d.served, served);
  EXPECT_DOUBLE_EQ(d.saved_ms, saved);
  // H100 and H200, each under 9.14 and 9.19, in that order.
  ASSERT_EQ(d.groups.size(), 4u);
  EXPECT_EQ(d.groups[0].gpu_model, "NVIDIA H100");
  EXPECT_EQ(d.groups[0].cudnn_version, 91400);
  EXPECT_EQ(d.groups[1].cudnn_version, 91900);
  int64_t records = 0;
  for (const DeviceGroup& g : d.groups) records += g.records;
  EXPECT_EQ(records, 20);
  EXPECT_EQ(d.groups[0].planned_stored, -1);  // no models asked
  // Twenty records on twenty days, in day order.
  ASSERT_EQ(d.days.size(), 20u);
  EXPECT_LT(d.days[0].day, d.days[1].day);
}

TEST(ReportAggregatorTest, BucketsTheChoiceByHeuristicRankAndGain) {
  Record heuristics_own = SyntheticRecord(0);  // fastest is rank 1
  Record faster = SyntheticRecord(1);
  faster.results = {SyntheticResult(1, 1.0, 0, 2),
                    SyntheticResult(0, 1.3, 0, 1)};
  Record no_heuristic = SyntheticRecord(2);
  no_heuristic.results = {SyntheticResult(1, 1.0, 0, 0)};
  ReportAggregator aggregator;
  for (const Record& r : {heuristics_own, faster, no_heuristic}) {
    aggregator.Add(r);
  }
  const ReportData d = aggregator.Finish();
  EXPECT_EQ(d.ranks[0], 1);  // 1st
  EXPECT_EQ(d.ranks[1], 1);  // 2nd
  EXPECT_EQ(d.ranks[5], 1);  // not offered
  EXPECT_EQ(d.gains[0], 1);  // < 1.02x: the heuristic's own
  EXPECT_EQ(d.gains[3], 1);  // 1.3x: 1.25-1.5x
  EXPECT_EQ(d.gains_unknown, 1);
}

TEST(ReportAggregatorTest, KeepsTheLargestWorkspacesWithTheCostWithoutOne) {
  ReportAggregator aggregator(3);
  for (int64_t i = 0; i < 30; ++i) {
    Record r = SyntheticRecord(i);
    r.results = {SyntheticResult(1, 1.0, (i + 1) * 1000, 2),
                 SyntheticResult(0, 1.5, 0, 1)};
    aggregator.Add(r);
  }
  const ReportData d = aggregator.Finish();
  ASSERT_EQ(d.workspaces.size(), 3u);
  EXPECT_EQ(d.workspaces[0].workspace_bytes, 30000);
  EXPECT_EQ(d.workspaces[1].workspace_bytes, 29000);
  EXPECT_EQ(d.workspaces[2].workspace_bytes, 28000);
  EXPECT_DOUBLE_EQ(d.workspaces[0].ms, 1.0);
  EXPECT_DOUBLE_EQ(d.workspaces[0].no_workspace_ms, 1.5);
}

TEST(ReportAggregatorTest, ComparesARevalidationWithTheOlderVersionsRecords) {
  Record old_changed = SyntheticRecord(10);
  old_changed.key.device.cudnn_version = 91400;
  old_changed.results = {SyntheticResult(1, 1.0, 0, 1)};
  Record new_changed = old_changed;
  new_changed.key.device.cudnn_version = 91900;
  new_changed.revalidated_from_cudnn = 91400;
  new_changed.measured_at_us += kDayUs;
  new_changed.results = {SyntheticResult(0, 1.2, 0, 1)};  // other, slower
  Record old_kept = SyntheticRecord(20);
  old_kept.key.device = old_changed.key.device;
  Record new_kept = old_kept;
  new_kept.key.device.cudnn_version = 91900;
  new_kept.revalidated_from_cudnn = 91400;
  Record no_source = SyntheticRecord(30);
  no_source.key.device = new_kept.key.device;
  no_source.revalidated_from_cudnn = 91400;
  ReportAggregator aggregator;
  // The revalidated records first: the older ones are found all the same.
  for (const Record& r :
       {new_changed, new_kept, no_source, old_changed, old_kept}) {
    aggregator.Add(r);
  }
  const ReportData d = aggregator.Finish();
  ASSERT_EQ(d.revalidations.size(), 1u);
  const RevalidationChange& c = d.revalidations[0];
  EXPECT_EQ(c.gpu_model, old_changed.key.device.gpu_model);
  EXPECT_EQ(c.from, "cuDNN 9.14.0");
  EXPECT_EQ(c.to, "cuDNN 9.19.0");
  EXPECT_EQ(c.records, 3);
  EXPECT_EQ(c.compared, 2);
  EXPECT_EQ(c.changed, 1);
  EXPECT_EQ(c.slower, 1);
  EXPECT_EQ(c.latest_us,
            std::max({new_changed.measured_at_us, new_kept.measured_at_us,
                      no_source.measured_at_us}));
}

TEST(ReportAggregatorTest, CountsThePlannedProblemsEachGroupStores) {
  const Record a = SyntheticRecord(2);
  const Record b = SyntheticRecord(4);  // same group as a
  ReportAggregator aggregator;
  aggregator.SetPlannedProblems(
      {"net"}, {a.key.problem, b.key.problem, SyntheticRecord(6).key.problem});
  aggregator.Add(a);
  aggregator.Add(b);
  aggregator.Add(b);  // counted once
  const ReportData d = aggregator.Finish();
  EXPECT_EQ(d.planned, 3);
  ASSERT_EQ(d.groups.size(), 1u);
  EXPECT_EQ(d.groups[0].planned_stored, 2);
}

TEST(ReportHtmlTest, HasEverySectionAndFigureAndEscapesText) {
  ReportAggregator aggregator;
  for (int64_t i = 0; i < 50; ++i) {
    Record r = SyntheticRecord(i);
    if (i == 7) r.key.device.gpu_model = "GPU <b>&'\"";
    aggregator.Add(r);
  }
  ReportPage page{"unix:/run/tunedb.sock", 1767225600000000, DaemonCounters{
                                                                 5, 6, 7, 60}};
  const std::string html = RenderReportHtml(aggregator.Finish(), page);
  for (const char* id : {"summary", "devices", "saved", "heuristic",
                         "predictions", "revalidation", "workspaces"}) {
    EXPECT_THAT(html, HasSubstr(std::string("<section id=") + id)) << id;
  }
  for (const char* figure : {"saved", "heuristic-rank", "heuristic-gain"}) {
    EXPECT_THAT(html, HasSubstr(std::string("data-figure=\"") + figure + "\""));
  }
  EXPECT_THAT(html, HasSubstr("GPU &lt;b&gt;&amp;&#39;&quot;"));
  EXPECT_THAT(html, Not(HasSubstr("<b>&")));
  // Self-contained: nothing to fetch.
  EXPECT_THAT(html, Not(HasSubstr("http://")));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
  EXPECT_THAT(html, Not(HasSubstr(" src=")));
  EXPECT_THAT(html, HasSubstr("misses answered by prediction"));
}

// An aggregate of 3 records with answers served on two days of the week of
// Monday 2026-12-07, to two programs and to Lookups that named none.
ReportData WithServedDays() {
  ReportAggregator aggregator;
  for (int64_t i = 0; i < 3; ++i) aggregator.Add(SyntheticRecord(i));
  ReportData data = aggregator.Finish();
  SetServedDays({{20794, "train <b>", 3, 4000},
                 {20795, "", 1, 250},
                 {20795, "eval", 2, 500}},
                &data);
  return data;
}

TEST(ReportHtmlTest, ThePageShowsTheTimeSavedByWeekAndProgram) {
  const std::string html = RenderReportHtml(WithServedDays(), ReportPage{});
  EXPECT_THAT(html, HasSubstr("<section id=weeks><h2>Time saved by week and "
                              "program</h2>"));
  EXPECT_THAT(html, HasSubstr("<th>week (from Monday)</th><th>program</th>"
                              "<th class=n>served</th><th class=n>saved</th>"));
  EXPECT_THAT(html, HasSubstr("<td>2026-12-07</td>"
                              "<td>train &lt;b&gt;</td><td class=n "
                              "data-v=\"3\">3</td>"));
  EXPECT_THAT(html, HasSubstr("<td>eval</td>"));
  EXPECT_THAT(html, HasSubstr("<td>(none named)</td>"));
  // The plot is of the days answers were served: two bars.
  EXPECT_THAT(html, HasSubstr("the search time saved by the answers served "
                              "each day"));
  EXPECT_THAT(html, Not(HasSubstr("has counted no answers by day yet")));
  EXPECT_THAT(html, HasSubstr(">2026-12-07</text>"));
  EXPECT_THAT(html, HasSubstr(">2026-12-08</text>"));
}

TEST(ReportHtmlTest, WithoutServedDaysThePlotIsByTheDayRecordsWereStored) {
  ReportAggregator aggregator;
  for (int64_t i = 0; i < 3; ++i) aggregator.Add(SyntheticRecord(i));
  const std::string html =
      RenderReportHtml(aggregator.Finish(), ReportPage{});
  EXPECT_THAT(html, HasSubstr("has counted no answers by day yet"));
  EXPECT_THAT(html, HasSubstr("<section id=weeks>"));
  EXPECT_THAT(html, HasSubstr("No answers counted by day and program yet."));
}

TEST(ReportHtmlTest, AFleetsPageHasNoWeeksSection) {
  ReportData fleet = WithServedDays();
  fleet.served_days.clear();
  fleet.week_programs.clear();
  fleet.fleet = "postgresql://tunedb@db/tunedb";
  fleet.hosts = {{"host-a", 3}};
  const std::string html = RenderReportHtml(fleet, ReportPage{});
  EXPECT_THAT(html, Not(HasSubstr("<section id=weeks>")));
  EXPECT_THAT(html, HasSubstr("has counted no answers by day yet"));
}

TEST(ReportHtmlTest, EscapesEveryHtmlSpecialCharacter) {
  EXPECT_EQ(HtmlEscape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(HtmlEscape("plain"), "plain");
}

}  // namespace
}  // namespace tunedb::tuner
