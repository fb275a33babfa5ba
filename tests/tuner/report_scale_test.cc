// The report of a database of a million records: aggregated and rendered
// in under 5 s, a page under 5 MB. The records are made in memory
// (SyntheticRecord) and fed one at a time, as the daemon's walk of its
// store feeds the Report rpc's aggregate; the time to make them is printed
// apart (bench/report/report_daemon_bench measures the whole way). Prints the
// measured time and size next to the targets. TUNEDB_REPORT_RECORDS sets
// another number of records.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "tests/tuner/report_records.h"
#include "common/report_data.h"
#include "tuner/report_html.h"

namespace tunedb::tuner {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

TEST(ReportScaleTest, AMillionRecordsRenderInUnderFiveSecondsAndFiveMb) {
  int64_t records = 1000000;
  if (const char* n = std::getenv("TUNEDB_REPORT_RECORDS")) {
    records = std::atoll(n);
  }
  ReportAggregator aggregator;
  Clock::duration making{}, adding{};
  for (int64_t i = 0; i < records; ++i) {
    const Clock::time_point t0 = Clock::now();
    const Record r = SyntheticRecord(i);
    const Clock::time_point t1 = Clock::now();
    aggregator.Add(r);
    making += t1 - t0;
    adding += Clock::now() - t1;
  }
  const Clock::time_point t2 = Clock::now();
  const ReportData data = aggregator.Finish();
  const std::string html = RenderReportHtml(
      data, ReportPage{"scale test", 1767225600000000,
                       DaemonCounters{1, 2, 3, 4}});
  const double render_s = Seconds(adding + (Clock::now() - t2));
  const double mb = static_cast<double>(html.size()) / (1 << 20);
  std::printf(
      "report of %lld records: %.2f s to aggregate and render (target < 5 s), "
      "%.3f MB page (target < 5 MB); %.2f s to make the records\n",
      static_cast<long long>(records), render_s, mb, Seconds(making));
  EXPECT_EQ(data.records, records);
  EXPECT_LT(mb, 5.0);
  EXPECT_LT(render_s, 5.0);
}

}  // namespace
}  // namespace tunedb::tuner
