// Aligned tables, CSV escaping and the progress line.
#include "tuner/table.h"

#include <sstream>

#include "gtest/gtest.h"
#include "tuner/progress_bar.h"

namespace tunedb::cli {
namespace {

TEST(TableTest, AlignsColumns) {
  Table t({"name", "ms>"});
  t.AddRow({"a", "1.5"});
  t.AddRow({"longer", "12.25"});
  std::ostringstream out;
  t.Print(out);
  EXPECT_EQ(out.str(),
            "name       ms\n"
            "------  -----\n"
            "a         1.5\n"
            "longer  12.25\n");
}

TEST(TableTest, Csv) {
  Table t({"a", "b"});
  t.AddRow({"x,y", "say \"hi\""});
  std::ostringstream out;
  t.PrintCsv(out);
  EXPECT_EQ(out.str(), "a,b\n\"x,y\",\"say \"\"hi\"\"\"\n");
}

TEST(ProgressBarTest, PlainLinesWhenNotATerminal) {
  std::ostringstream out;
  ProgressBar bar(out, /*tty=*/false, "tuning", 10,
                  std::chrono::milliseconds(0));
  bar.Update(5, "5 searched");
  bar.Finish("10 searched");
  const std::string text = out.str();
  EXPECT_EQ(text.find('\r'), std::string::npos);
  EXPECT_NE(text.find("tuning 5/10 (50%)"), std::string::npos) << text;
  EXPECT_NE(text.find("5 searched"), std::string::npos);
  EXPECT_NE(text.find("ETA"), std::string::npos);
}

TEST(ProgressBarTest, RedrawsOnATerminal) {
  std::ostringstream out;
  ProgressBar bar(out, /*tty=*/true, "tuning", 4);
  bar.Update(1);
  bar.Finish();
  EXPECT_EQ(out.str().front(), '\r');
  EXPECT_NE(out.str().find("[######"), std::string::npos);
}

TEST(ProgressBarTest, FormatSeconds) {
  EXPECT_EQ(FormatSeconds(3.21), "3.2s");
  EXPECT_EQ(FormatSeconds(65), "1m05s");
  EXPECT_EQ(FormatSeconds(7380), "2h03m");
}

}  // namespace
}  // namespace tunedb::cli
