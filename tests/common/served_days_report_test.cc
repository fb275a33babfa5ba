// The report's answers served by day and by week and program
// (SetServedDays, common/report_data.h): each day's sums in day order, and
// per week (Monday to Sunday, UTC) of the last 12 up to the newest day the
// 10 programs that saved the most, newest week first.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/report_data.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunedb {
namespace {

// 2026-12-07, a Monday (days since the epoch).
constexpr int64_t kMonday = 20794;

TEST(ServedDaysReportTest, AWeekStartsOnItsMondayUtc) {
  EXPECT_EQ(WeekOfDay(0), -3);  // 1970-01-01, a Thursday
  EXPECT_EQ(WeekOfDay(4), 4);   // 1970-01-05, a Monday
  EXPECT_EQ(WeekOfDay(kMonday), kMonday);
  EXPECT_EQ(WeekOfDay(kMonday + 6), kMonday);  // its Sunday
  EXPECT_EQ(WeekOfDay(kMonday + 7), kMonday + 7);
  EXPECT_EQ(WeekOfDay(kMonday - 1), kMonday - 7);
}

TEST(ServedDaysReportTest, EachDaySumsItsProgramsAndEachWeekRanksThem) {
  const std::vector<ServedDayProgram> rows = {
      {kMonday, "", 1, 0.5},
      {kMonday, "train", 2, 4.0},
      {kMonday + 3, "eval", 5, 6.0},
      {kMonday + 3, "train", 1, 2.5},
      {kMonday + 7, "eval", 1, 1.0},
  };
  ReportData data;
  SetServedDays(rows, &data);
  ASSERT_EQ(data.served_days.size(), 3u);
  EXPECT_EQ(data.served_days[0].day, kMonday);
  EXPECT_EQ(data.served_days[0].served, 3);
  EXPECT_EQ(data.served_days[0].saved_ms, 4.5);
  EXPECT_EQ(data.served_days[1].served, 6);
  EXPECT_EQ(data.served_days[2].day, kMonday + 7);
  ASSERT_EQ(data.week_programs.size(), 4u);
  // The newest week first; then the week before, the most saved first.
  EXPECT_EQ(data.week_programs[0].week, kMonday + 7);
  EXPECT_EQ(data.week_programs[0].program, "eval");
  EXPECT_EQ(data.week_programs[1].week, kMonday);
  EXPECT_EQ(data.week_programs[1].program, "train");
  EXPECT_EQ(data.week_programs[1].served, 3);
  EXPECT_EQ(data.week_programs[1].saved_ms, 6.5);
  EXPECT_EQ(data.week_programs[2].program, "eval");
  EXPECT_EQ(data.week_programs[3].program, "");
}

TEST(ServedDaysReportTest, AWeekListsItsTenProgramsThatSavedTheMost) {
  std::vector<ServedDayProgram> rows;
  for (int i = 0; i < 15; ++i) {
    rows.push_back({kMonday, absl::StrCat("p", i), 1, 1.0 + i});
  }
  ReportData data;
  SetServedDays(rows, &data);
  ASSERT_EQ(data.week_programs.size(), kWeekProgramsListed);
  EXPECT_EQ(data.week_programs.front().program, "p14");
  EXPECT_EQ(data.week_programs.back().program, "p5");
  ASSERT_EQ(data.served_days.size(), 1u);
  EXPECT_EQ(data.served_days[0].served, 15);
}

TEST(ServedDaysReportTest, WeeksBeforeTheLastTwelveAreNotListedButTheirDaysAre) {
  const std::vector<ServedDayProgram> rows = {
      {kMonday - 7 * 12, "old", 1, 1.0},
      {kMonday - 7 * 11, "kept", 1, 1.0},
      {kMonday, "new", 1, 1.0},
  };
  ReportData data;
  SetServedDays(rows, &data);
  EXPECT_EQ(data.served_days.size(), 3u);
  ASSERT_EQ(data.week_programs.size(), 2u);
  EXPECT_EQ(data.week_programs[0].program, "new");
  EXPECT_EQ(data.week_programs[1].program, "kept");
}

TEST(ServedDaysReportTest, NoRowsLeaveTheReportWithoutServedDays) {
  ReportData data;
  SetServedDays({}, &data);
  EXPECT_TRUE(data.served_days.empty());
  EXPECT_TRUE(data.week_programs.empty());
}

}  // namespace
}  // namespace tunedb
