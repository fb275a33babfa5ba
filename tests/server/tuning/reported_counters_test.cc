// ReportedCounters: the sums clients report, and the bound on how many
// series they make however many names and sources clients send.
#include "server/tuning/reported_counters.h"

#include <cstdint>
#include <limits>
#include <map>
#include <string>

#include "gtest/gtest.h"

namespace tunedb {
namespace {

TEST(ReportedCountersTest, SumsAndCountsReports) {
  ReportedCounters counters;
  counters.Add({{"preload.hit", 2}, {"preload.miss", 1}});
  counters.Add({{"preload.hit", 3}});
  counters.Add({});  // an empty report is not counted
  const ReportedCounters::Snapshot s = counters.Get();
  EXPECT_EQ(s.reports, 2);
  EXPECT_EQ(s.sums.at("preload.hit"), 5);
  EXPECT_EQ(s.sums.at("preload.miss"), 1);
  EXPECT_EQ(s.sums.size(), 2u);
}

TEST(ReportedCountersTest, SumsSaturate) {
  ReportedCounters counters;
  counters.Add({{"a.b", std::numeric_limits<int64_t>::max()}});
  counters.Add({{"a.b", 5}});
  EXPECT_EQ(counters.Get().sums.at("a.b"),
            std::numeric_limits<int64_t>::max());
}

// Issue 50: past the bound, each new source made a "<source>.other" series,
// so 20,000 reports made 20,256 series.
TEST(ReportedCountersTest, NewSourcesPastTheBoundFoldIntoOneSeries) {
  ReportedCounters counters;
  for (size_t i = 0; i < ReportedCounters::kMaxNames; ++i) {
    counters.Add({{"fill.n" + std::to_string(i), 1}});
  }
  ASSERT_EQ(counters.Get().sums.size(), ReportedCounters::kMaxNames);
  for (int source = 0; source < 1000; ++source) {
    counters.Add({{"s" + std::to_string(source) + ".hit", 2},
                  {"s" + std::to_string(source) + ".miss", 1}});
  }
  const ReportedCounters::Snapshot s = counters.Get();
  // 1,000 new sources add one series: the overflow.
  EXPECT_EQ(s.sums.size(), ReportedCounters::kMaxNames + 1);
  EXPECT_EQ(s.sums.at(ReportedCounters::kOverflowName), 3000);
  EXPECT_EQ(s.reports, static_cast<int64_t>(ReportedCounters::kMaxNames) +
                           1000);
  // Known names still add up under their own name.
  counters.Add({{"fill.n0", 4}});
  EXPECT_EQ(counters.Get().sums.at("fill.n0"), 5);
}

}  // namespace
}  // namespace tunedb
